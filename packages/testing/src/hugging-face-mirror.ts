/**
 * A Hugging Face mirror on loopback, for the model download tests: point HF_ENDPOINT at its
 * origin and `hf:` URIs resolve and download from it, never from the internet. It answers the
 * two requests node-llama-cpp makes for a URI: the manifest that names the repository's GGUF
 * file for a tag, and the file itself.
 */
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HuggingFaceMirror {
  /** For HF_ENDPOINT. */
  origin: string;
  /** Every request, `METHOD /path`, in order: proves a download went through the mirror, or did not happen. */
  served: string[];
  close(): Promise<void>;
}

/**
 * `files` maps a repository (`user/name`) to the GGUF file it holds, served under the name
 * `<name without -GGUF>-<tag>.gguf` for any tag. Other repositories are a 404, as on the hub.
 */
export async function startHuggingFaceMirror(files: Record<string, string>): Promise<HuggingFaceMirror> {
  const served: string[] = [];
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://mirror').pathname;
    served.push(`${request.method} ${path}`);
    const manifest = /^\/v2\/([^/]+)\/([^/]+)\/manifests\/([^/]+)$/.exec(path);
    if (manifest) {
      const [, user, name, tag] = manifest.map((part) => decodeURIComponent(part));
      if (files[`${user}/${name}`] === undefined) return void response.writeHead(404).end();
      const fileName = `${name!.replace(/-GGUF$/i, '')}-${tag}.gguf`;
      return void response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ ggufFile: { rfilename: fileName } }));
    }
    const download = /^\/([^/]+)\/([^/]+)\/resolve\/main\/([^/]+\.gguf)$/.exec(path);
    const source = download
      ? files[`${decodeURIComponent(download[1]!)}/${decodeURIComponent(download[2]!)}`]
      : undefined;
    if (source === undefined) return void response.writeHead(404).end();
    response.writeHead(200, {
      'content-type': 'application/octet-stream',
      'content-length': String(statSync(source).size),
    });
    if (request.method === 'HEAD') response.end();
    else createReadStream(source).pipe(response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    served,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
