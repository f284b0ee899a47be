/** `mms`: the command line. `mms serve` runs the service; `mms --help` explains every flag. */
import { Command, InvalidArgumentError } from 'commander';
import { pull } from './pull.js';
import { serve } from './serve.js';

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError('must be an integer from 0 to 65535');
  return port;
}

const program = new Command()
  .name('mms')
  .description('mms, the Model Messages Service: POST /v1/messages over engines you run yourself.')
  .showHelpAfterError()
  .addHelpText('after', '\nAlso:\n  compare FILE    the calling client\'s tier move check, as a table (mms compare --help)');

program
  .command('serve')
  .description('Run the service until SIGINT or SIGTERM, then shut down gracefully.')
  .option('-c, --config <file>', 'JSON config file (schema: packages/server/config.schema.json); env MMS_CONFIG; default: the built-in three-tier config', process.env.MMS_CONFIG)
  .option('--host <host>', 'address to listen on; env MMS_HOST; overrides listen.host (default 127.0.0.1)', process.env.MMS_HOST)
  .option('-p, --port <port>', 'port to listen on; env MMS_PORT; overrides listen.port (default 8080)', parsePort, process.env.MMS_PORT === undefined ? undefined : parsePort(process.env.MMS_PORT))
  .option('--log-level <level>', 'fatal, error, warn, info, debug or trace; env MMS_LOG_LEVEL', process.env.MMS_LOG_LEVEL ?? 'info')
  .addHelpText('after', '\nEnvironment:\n  MMS_API_KEYS  comma-separated API keys, added to the config file\'s apiKeys')
  .action(async (options: { config?: string; host?: string; port?: number; logLevel: string }) => {
    await serve(options);
  });

program
  .command('pull')
  .description('Download model files ahead of time: the given URIs, or every hf: model of the config.')
  .argument('[uris...]', 'Hugging Face URIs such as hf:Qwen/Qwen3-4B-GGUF:Q4_K_M')
  .option('-c, --config <file>', 'config whose llama-cpp models to pull when no URI is given; env MMS_CONFIG; default: the built-in config', process.env.MMS_CONFIG)
  .option('--models-folder <folder>', 'where to keep them; env MMS_MODELS_FOLDER; default ~/.cache/mms/models')
  .action(async (uris: string[], options: { config?: string; modelsFolder?: string }) => {
    await pull(uris, options);
  });

await program.parseAsync(process.argv);
