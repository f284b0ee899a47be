/** `mms`: the command line. `mms serve` runs the service; `mms --help` explains every flag. */
import { Command, InvalidArgumentError } from 'commander';
import { serve } from './serve.js';

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError('must be an integer from 0 to 65535');
  return port;
}

const program = new Command()
  .name('mms')
  .description('mms, the Model Messages Service: POST /v1/messages over engines you run yourself.')
  .showHelpAfterError();

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

await program.parseAsync(process.argv);
