/**
 * The embedded default engine: a GGUF model run in-process by node-llama-cpp (llama.cpp). This
 * class finds the model file and loads it, once: at start for a model with `load: "eager"` (the
 * default; `mms serve` calls `load` once listening), at its first request for `"lazy"`. The
 * loaded model and generation on it are in loaded-model.ts, imported only then: a service whose
 * models are all elsewhere never loads node-llama-cpp, which costs most of a second.
 */
import { open } from 'node:fs/promises';
import type { ModelProfile } from '@model-messages/protocol';
import type { Backend, BackendReadiness } from '../backend.js';
import type { BackendContext, LoadMode } from '../backend-kind.js';
import type { Cancellation } from '../cancellation.js';
import type { ModelCall, ModelPrompt } from '../call/model-call.js';
import type { BackendReport } from '../backend-events.js';
import type { StreamPart } from '../../streaming/stream-part.js';
import type { LlamaCppBackendConfig } from './llama-cpp-config.js';
import type { LoadedModel } from './loaded-model.js';
import { modelFile } from './model-file.js';

/** The first bytes of every GGUF file. */
const GGUF_MAGIC = 'GGUF';

export class LlamaCppBackend implements Backend {
  readonly name = 'llama-cpp';
  readonly telemetryName: string;
  /** Its tokenizer is in process (loaded-model.ts): a turn's context budget counts exactly. */
  readonly countsTokensInProcess = true;
  private modelPath: Promise<string> | undefined;
  private loaded: Promise<LoadedModel> | undefined;
  /** For GET /ready: whether the model is in memory, on its way, or failed the last time. */
  private loadState: 'not loaded' | 'loading' | 'loaded' | 'failed to load' = 'not loaded';

  private readonly configFolder: string;
  private readonly profile: ModelProfile;
  private readonly loadMode: LoadMode;
  /** Where model loads, downloads and regenerations are reported. */
  private readonly report: BackendReport;

  constructor(
    private readonly config: LlamaCppBackendConfig,
    context: Pick<BackendContext, 'configFolder' | 'profile' | 'load' | 'report' | 'telemetryName'>,
  ) {
    this.configFolder = context.configFolder;
    this.profile = context.profile;
    this.loadMode = context.load;
    this.report = context.report;
    this.telemetryName = context.telemetryName;
  }

  /**
   * Finds the GGUF, downloading it first if it is remote and not cached, and checks that it is
   * one: a file that is not (an HTML error page saved under a model's name) stops the start,
   * lazy or not, rather than the first request.
   */
  prepare(options: { progress: boolean }): Promise<string> {
    this.modelPath ??= modelFile(this.config.model, {
      configFolder: this.configFolder,
      modelsFolder: this.config.modelsFolder,
      progress: options.progress,
      downloaded: (seconds) =>
        this.report({ type: 'model-download', backend: this.name, source: this.config.model, seconds }),
    }).then(async (path) => {
      await this.assertGguf(path);
      return path;
    });
    return this.modelPath;
  }

  async load(): Promise<void> {
    await this.model();
  }

  async readiness(): Promise<BackendReadiness[]> {
    const state = this.loadState;
    // A lazy model loads at its first request, which waits for it: counted as ready, or a
    // readiness probe that holds traffic back until it is ready would never let it load.
    if (state === 'not loaded' && this.loadMode === 'lazy')
      return [{ backend: this.name, ready: true, state: 'not loaded: loads at its first request' }];
    return [{ backend: this.name, ready: state === 'loaded', state }];
  }

  async *stream(call: ModelCall, cancellation: Cancellation): AsyncIterable<StreamPart[]> {
    const model = await this.model();
    yield* model.stream(call, cancellation);
  }

  async countTokens(prompt: ModelPrompt): Promise<number> {
    return (await this.model()).countTokens(prompt);
  }

  async close(): Promise<void> {
    const loaded = await this.loaded?.catch(() => undefined);
    await loaded?.close();
  }

  /** The loaded model, loading it first; after a failure, the next call tries again. */
  private model(): Promise<LoadedModel> {
    this.loaded ??= this.loadModel().then(
      (model) => {
        this.loadState = 'loaded';
        return model;
      },
      (error: unknown) => {
        this.loaded = undefined;
        this.loadState = 'failed to load';
        throw error;
      },
    );
    return this.loaded;
  }

  private async loadModel(): Promise<LoadedModel> {
    this.loadState = 'loading';
    const path = await this.prepare({ progress: false });
    const { LoadedModel } = await import('./loaded-model.js');
    // From here: the file is found, so the time is the load's alone.
    const started = performance.now();
    try {
      const model = await LoadedModel.load(this.config, this.profile, path, this.report);
      this.report({ type: 'model-load', backend: this.name, seconds: (performance.now() - started) / 1000 });
      return model;
    } catch (error) {
      throw new Error(`model ${this.profile.id}: ${path} cannot be loaded: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }

  private async assertGguf(path: string): Promise<void> {
    const file = await open(path, 'r');
    try {
      const { bytesRead, buffer } = await file.read(Buffer.alloc(GGUF_MAGIC.length), 0, GGUF_MAGIC.length, 0);
      if (buffer.subarray(0, bytesRead).toString('latin1') !== GGUF_MAGIC)
        throw new Error(
          `model ${this.profile.id}: ${path} is not a GGUF file: it does not begin with "${GGUF_MAGIC}"` +
            (bytesRead === 0 ? ' (it is empty)' : ''),
        );
    } finally {
      await file.close();
    }
  }
}
