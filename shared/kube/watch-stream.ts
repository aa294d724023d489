// A watch over one streamed answer: its lines of JSON decoded into events as they arrive, and
// the watch ended when the server ends it, when stopped, or when a line is not an event.
import { StringDecoder } from 'node:string_decoder';
import { KubeApiError, kubeApiError } from './errors.js';
import type { StreamSink } from './http2-connection.js';
import type { WatchEvent, WatchStream } from './objects.js';
import type { ClusterTransport } from './transport.js';

/**
 * Opens the watch at `path` (its rate-limit token already taken), handing each event to
 * `onEvent`. Resolves once the server accepted it; throws KubeApiError when it refused it.
 */
export async function openWatch(
  transport: ClusterTransport,
  path: string,
  onEvent: (event: WatchEvent) => void,
): Promise<WatchStream> {
  let endWatch: (error?: Error) => void = () => undefined;
  const ended = new Promise<void>((resolve, reject) => {
    endWatch = (error) => (error === undefined ? resolve() : reject(error));
  });
  ended.catch(() => undefined); // the caller may only stop() it
  // Events are lines of JSON; a chunk may end inside a line (or inside a character).
  const decoder = new StringDecoder('utf8');
  // The text after the last newline, in pieces: a 1 MB object arrives in many chunks, and
  // joining (and searching) the whole of it again at each one would be quadratic.
  let rest: string[] = [];
  // Set once the watch is open: a broken line must stop it.
  const stream = { close: (): void => undefined };
  let broken: Error | undefined;
  const sink: StreamSink = {
    data: (chunk) => {
      if (broken !== undefined) return;
      const text = decoder.write(chunk);
      let nl = text.indexOf('\n');
      if (nl === -1) {
        rest.push(text);
        return;
      }
      let start = 0;
      try {
        for (; nl !== -1; nl = text.indexOf('\n', start)) {
          const line =
            rest.length === 0 ? text.slice(start, nl) : rest.join('') + text.slice(0, nl);
          rest = [];
          start = nl + 1;
          if (line.length > 1) onEvent(JSON.parse(line) as WatchEvent);
        }
      } catch (error) {
        // A line that is not an event: this watch cannot be trusted further.
        broken = error instanceof Error ? error : new Error(String(error));
        stream.close();
        return;
      }
      if (start < text.length) rest.push(text.slice(start));
    },
    end: (error) => endWatch(broken ?? error),
  };
  const headers = transport.headersFor(undefined, 'application/json');
  const answer = await transport.openStream('GET', path, headers, sink).catch((error: Error) => {
    transport.count('watch', 'error');
    throw new KubeApiError(
      transport.cluster,
      0,
      'ServiceUnavailable',
      `GET ${path}: ${error.message}`,
      {},
      { cause: error },
    );
  });
  transport.count('watch', String(answer.code));
  if (answer.code >= 400) throw kubeApiError(transport.cluster, answer.code, answer.text);
  stream.close = () => answer.close();
  if (broken !== undefined) answer.close(); // broken before it could be closed
  return { ended, stop: () => answer.close() };
}
