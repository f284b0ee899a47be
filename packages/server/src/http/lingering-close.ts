/**
 * Closing a connection whose client may still be sending. Destroyed at once, a socket with unread
 * bytes from its client sends a reset, which can discard the reply before the client reads it:
 * in a flood of 30 MB bodies refused by the body budget (issue 31), 10 of 73 clients, still
 * writing, got EPIPE and never saw their 529. So the service ends its side at once (the reply,
 * then a FIN) and destroys the socket LINGER_MS later; a client that never closes its own side
 * (node:http's sockets are half-open) cannot hold the descriptor longer.
 */
import type { Socket } from 'node:net';

const LINGER_MS = 1_000;

/** Destroys `socket` LINGER_MS from now, unless it closes before. */
export function destroyAfterLinger(socket: Socket): void {
  const linger = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  socket.once('close', () => clearTimeout(linger));
}

/**
 * Makes node:http's close of this connection after its reply (a reply with `Connection: close`,
 * which node:http ends with socket.destroySoon()) a lingering one that reads nothing more: the
 * rest of the body stays in the kernel's receive window, which a socket not read from keeps
 * small, and the client's writes wait on it while it reads the reply.
 */
export function lingerAfterLastReply(socket: Socket): void {
  socket.destroySoon = () => {
    // node:http resumes the socket a tick later to drop the body nobody read
    // (IncomingMessage's dump): held paused instead, whenever it is resumed.
    const holdPaused = (): void => void socket.pause();
    socket.on('resume', holdPaused);
    holdPaused();
    socket.end();
    destroyAfterLinger(socket);
  };
}
