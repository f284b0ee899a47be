/**
 * What one more hop costs on the bench's host, whatever runs it: nginx (Debian's package, C, one
 * worker, no access log) in front of the fake engine, passing chat completions through with a
 * pool of keep-alive connections and no buffering, so that a stream's chunks go on as they come.
 * It neither reads nor changes the bodies: the least any gateway can add, against which the Node
 * floor (floor-proxy.ts) and mms are read. Not installed by the bench (`apt-get install nginx`);
 * without it the arm is reported as not measured.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, servedPeer, type PeerProcess } from './peers.js';

const NGINX = '/usr/sbin/nginx';

/** nginx's version, or an error saying how to get it. */
export function nginxVersion(): string {
  const result = spawnSync(NGINX, ['-v'], { encoding: 'utf8' });
  if (result.error !== undefined || result.status !== 0)
    throw new Error(`${NGINX} not found: apt-get install nginx (Debian) for the one-hop arm`);
  return result.stderr.trim().replace(/^nginx version: /, '');
}

export async function startNginxHop(enginePort: number): Promise<PeerProcess> {
  // First: without nginx, a spawn would fail later with an 'error' event nobody listens for.
  const version = nginxVersion();
  const port = await freePort();
  const folder = mkdtempSync(join(tmpdir(), 'mms-bench-nginx-'));
  const config = join(folder, 'nginx.conf');
  writeFileSync(
    config,
    `worker_processes 1;
daemon off;
pid ${folder}/nginx.pid;
error_log ${folder}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${folder}/body;
  proxy_temp_path ${folder}/proxy;
  fastcgi_temp_path ${folder}/fastcgi;
  uwsgi_temp_path ${folder}/uwsgi;
  scgi_temp_path ${folder}/scgi;
  keepalive_timeout 65s;
  keepalive_requests 1000000;
  upstream engine { server 127.0.0.1:${enginePort}; keepalive 64; keepalive_requests 1000000; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://engine;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_request_buffering off;
    }
  }
}
`,
  );
  const child = spawn(NGINX, ['-c', config, '-p', folder, '-e', `${folder}/error.log`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return servedPeer('nginx', version, child, port, { folder });
}
