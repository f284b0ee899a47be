/** A view's figures asked of the service while the view is shown (issue 37). */
import { useEffect, useState } from './preact-hooks.js';

/**
 * Calls `load` now and every `everyMs` until the view goes or `inputs` change: the last reply, and
 * the problem of the last call that failed (undefined once one succeeds again).
 */
export function usePolled<Reply>(
  load: (signal: AbortSignal) => Promise<Reply>,
  everyMs: number,
  inputs: unknown[],
): { reply: Reply | undefined; problem: string | undefined } {
  const [reply, setReply] = useState<Reply | undefined>(undefined);
  const [problem, setProblem] = useState<string | undefined>(undefined);
  useEffect(() => {
    const controller = new AbortController();
    const poll = () =>
      load(controller.signal).then(
        (answer) => {
          setReply(answer);
          setProblem(undefined);
        },
        (error: Error) => {
          if (!controller.signal.aborted) setProblem(error.message);
        },
      );
    void poll();
    const timer = setInterval(poll, everyMs);
    return () => {
      clearInterval(timer);
      controller.abort();
    };
  }, inputs);
  return { reply, problem };
}
