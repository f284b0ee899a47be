/**
 * `mms`: the command line. `mms serve` runs the service; `mms --help` explains every flag.
 * Only commander is loaded up front: a command's modules (the whole service, for serve) are
 * imported when it runs, so that `--help` and `--version` answer at once (docs/benchmarks.md,
 * "Issue 18: start-up").
 */
import { Command } from 'commander';
import { packageVersion } from './package-version.js';
import type { ServeFlags } from './serve-settings.js';

if (process.argv[2] === 'compare') {
  const { runClientCommand } = await import('./client-command.js');
  process.exitCode = await runClientCommand('@model-messages/client/compare-command', process.argv.slice(3));
} else {
  await commandLine().parseAsync(process.argv);
}

function commandLine(): Command {
  const program = new Command()
    .name('mms')
    .description('mms, the Model Messages Service: POST /v1/messages over engines you run yourself.')
    .version(packageVersion(), '-V, --version', 'print the version')
    .showHelpAfterError()
    .addHelpText(
      'after',
      "\nAlso:\n  compare FILE    the calling client's tier move check, as a table (mms compare --help)",
    );

  program
    .command('serve')
    .description('Run the service until SIGINT or SIGTERM, then shut down gracefully.')
    .option(
      '-c, --config <file>',
      'JSON config file (schema: packages/server/config.schema.json); env MMS_CONFIG; default: the built-in three-tier config',
      process.env.MMS_CONFIG,
    )
    // Values, and the variables behind these flags, are read and checked by the serve action
    // (cli/serve-settings.ts): a bad MMS_PORT must not break --help or the other commands.
    .option('--host <host>', 'address to listen on; env MMS_HOST; overrides listen.host (default 127.0.0.1)')
    .option('-p, --port <port>', 'port to listen on, 0 to 65535; env MMS_PORT; overrides listen.port (default 8080)')
    .option('--log-level <level>', 'fatal, error, warn, info, debug or trace; env MMS_LOG_LEVEL; default info')
    .addHelpText(
      'after',
      "\nEnvironment:\n  MMS_API_KEYS     comma-separated API keys, added to the config file's apiKeys\n  MMS_DATA_FOLDER  where the signing key is kept when the config has no signingKey; overrides dataFolder (default ~/.local/share/mms)\n  A variable set to an empty value counts as unset.",
    )
    .action(async (flags: ServeFlags) => {
      const { serve } = await import('./serve.js');
      await serve(flags);
    });

  program
    .command('pull')
    .description(
      "Download model files ahead of time: the given URIs, or the config's hf: and https: models not yet in their folders.",
    )
    .argument('[uris...]', 'Hugging Face URIs such as hf:Qwen/Qwen3-4B-GGUF:Q4_K_M')
    .option(
      '-c, --config <file>',
      'config whose llama-cpp models to pull when no URI is given; env MMS_CONFIG; default: the built-in config',
      process.env.MMS_CONFIG,
    )
    .option(
      '--models-folder <folder>',
      "where to keep them, for every model; without it: the backend's modelsFolder, else env MMS_MODELS_FOLDER, else ~/.cache/mms/models",
    )
    .addHelpText('after', '\nEnvironment:\n  HF_ENDPOINT  a Hugging Face mirror to download hf: models from')
    .action(async (uris: string[], options: { config?: string; modelsFolder?: string }) => {
      const { pull } = await import('./pull.js');
      await pull(uris, options);
    });

  const keys = program.command('keys').description("Make API keys for the config's keys list.");
  keys
    .command('new')
    .description(
      "Print a new random API key, once, and the config entry that holds its SHA-256 (never the key): add the entry to the config's keys, and give the key to its user.",
    )
    .requiredOption('--id <id>', 'the id the log, the metrics and GET /v1/usage name the key by (e.g. team-a)')
    .action(async (options: { id: string }) => {
      const { newKey } = await import('./keys-new.js');
      process.exitCode = newKey(options.id, process.stdout, process.stderr);
    });
  return program;
}
