// The hot path's messages on one NATS connection: JetStream publishes awaiting their ack, and
// messages that need no answer (acks of consumed messages, lease releases).
//
// Why not nats.js's request(): per request it starts a timer, registers a muxed request object
// and builds an Error (with a stack) even when the answer arrives, which made a request cost
// three times a publish; and every message sent from another microtask costs its own socket
// write. Here answers arrive through one wildcard inbox subscription keyed by a counter, one
// sweep per second times out requests left unanswered, and everything sent during one turn of
// the event loop leaves in one write (sent at setImmediate, so it adds no wait of its own).
import {
  createInbox,
  headers as natsHeaders,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
} from '@nats-io/transport-node';

/** JetStream refused a publish (e.g. a lease create found the key taken). */
export class JetStreamPublishError extends Error {
  /** HTTP-like status code, e.g. 400, 503. */
  readonly code: number;
  /** JetStream's error code, e.g. 10071 (wrong last sequence), 10060 (expected stream). */
  readonly errCode: number;
  constructor(description: string, code: number, errCode: number) {
    super(description);
    this.name = 'JetStreamPublishError';
    this.code = code;
    this.errCode = errCode;
  }
}

/** JetStream's error code for a publish whose expected last sequence did not match. */
export const wrongLastSequence = 10071;

/** A request got no answer: timed out, nothing listens on the subject, or the connection dropped. */
export class BusRequestError extends Error {
  constructor(
    message: string,
    /** "timeout", "no-responders" or "disconnected". */
    readonly reason: 'timeout' | 'no-responders' | 'disconnected',
  ) {
    super(message);
    this.name = 'BusRequestError';
  }
}

/** JetStream's acknowledgement of a stored message. */
export interface PublishAck {
  stream: string;
  /** Stream sequence of the message; for a KV entry, its revision. */
  seq: number;
  /** The message id was seen within the duplicate window: nothing new was stored. */
  duplicate: boolean;
}

/** How a JetStream publish is checked by the server. */
export interface PublishOptions {
  /** Nats-Msg-Id, for de-duplication within the stream's window. */
  msgID?: string;
  /** Store only if the subject's last message has this sequence (0: the subject is empty). */
  expectLastSubjectSequence?: number;
  /** Further headers; the ones above are added to them. */
  headers?: MsgHdrs;
}

interface Waiting {
  resolve: (msg: Msg) => void;
  reject: (error: Error) => void;
  deadline: number;
}

const decoder = new TextDecoder();

/** The end of the reply subject of a request sent with sendRequest, whose answer nobody reads. */
export const unansweredSuffix = '-unanswered';

/** Requests and one-way messages of one connection, batched per event-loop turn. */
export class BusPipe {
  private readonly inbox: string;
  private readonly unanswered: string;
  private readonly waiting = new Map<string, Waiting>();
  private serial = 0;
  private queue: (() => void)[] = [];
  private scheduled = false;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly nc: NatsConnection,
    /** How long a request waits for its answer. */
    private readonly timeoutMs = 5_000,
  ) {
    // The connection's inbox prefix: a server may let this user subscribe below it only.
    const prefix = (nc as { options?: { inboxPrefix?: string } }).options?.inboxPrefix;
    this.inbox = createInbox(prefix);
    // Not matched by the inbox's wildcard subscription below.
    this.unanswered = `${this.inbox}${unansweredSuffix}`;
    nc.subscribe(`${this.inbox}.*`, {
      callback: (error, msg) => {
        if (error === null) this.answer(msg);
      },
    });
    this.sweeper = setInterval(() => this.sweep(), 1_000);
    this.sweeper.unref();
    void this.followStatus();
  }

  /** Publishes to a stream and resolves with its ack; rejects with JetStreamPublishError. */
  async publish(
    subject: string,
    payload: string | Uint8Array | undefined,
    options: PublishOptions = {},
  ): Promise<PublishAck> {
    let h = options.headers;
    if (options.msgID !== undefined || options.expectLastSubjectSequence !== undefined) {
      h ??= natsHeaders();
      if (options.msgID !== undefined) h.set('Nats-Msg-Id', options.msgID);
      if (options.expectLastSubjectSequence !== undefined)
        h.set('Nats-Expected-Last-Subject-Sequence', String(options.expectLastSubjectSequence));
    }
    const answer = await this.request(subject, payload, h);
    const body = JSON.parse(decoder.decode(answer.data)) as {
      stream?: string;
      seq?: number;
      duplicate?: boolean;
      error?: { code?: number; err_code?: number; description?: string };
    };
    if (body.error !== undefined)
      throw new JetStreamPublishError(
        body.error.description ?? 'publish refused',
        body.error.code ?? 0,
        body.error.err_code ?? 0,
      );
    return { stream: body.stream ?? '', seq: body.seq ?? 0, duplicate: body.duplicate === true };
  }

  /** Sends a request and resolves with the answer (the raw message). */
  request(subject: string, payload?: string | Uint8Array, headers?: MsgHdrs): Promise<Msg> {
    return new Promise<Msg>((resolve, reject) => {
      const token = (this.serial++).toString(36);
      this.waiting.set(token, { resolve, reject, deadline: Date.now() + this.timeoutMs });
      const reply = `${this.inbox}.${token}`;
      this.later(() => {
        try {
          this.nc.publish(subject, payload, {
            reply,
            ...(headers === undefined ? {} : { headers }),
          });
        } catch (error) {
          this.waiting.delete(token);
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
    });
  }

  /**
   * Sends a request whose answer nobody needs (e.g. a JetStream API call made best effort), with
   * this turn's others. The service still needs a subject to answer to; this one has no
   * subscriber, so the answer costs this connection nothing.
   */
  sendRequest(subject: string, payload?: string | Uint8Array): void {
    this.later(() => {
      try {
        this.nc.publish(subject, payload, { reply: this.unanswered });
      } catch {
        // Closed connection: like a message lost on the way, which no caller relies on.
      }
    });
  }

  /**
   * Runs `action` (which sends something, e.g. `m.ack()`) with this turn's other messages, so
   * they share one socket write. Actions run in the order given.
   */
  later(action: () => void): void {
    this.queue.push(action);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Sends what is queued now (e.g. before a final nc.flush()). */
  flush(): void {
    this.scheduled = false;
    const queue = this.queue;
    this.queue = [];
    for (const action of queue) {
      try {
        action();
      } catch {
        // An action failing to send (closed connection) must not stop the others.
      }
    }
  }

  private answer(msg: Msg): void {
    const token = msg.subject.slice(this.inbox.length + 1);
    const waiting = this.waiting.get(token);
    if (waiting === undefined) return; // timed out already
    this.waiting.delete(token);
    if (msg.data.length === 0 && msg.headers?.code === 503)
      waiting.reject(new BusRequestError('no responders', 'no-responders'));
    else waiting.resolve(msg);
  }

  // Requests wait in the order sent, all with the same timeout: the expired ones come first.
  private sweep(): void {
    const now = Date.now();
    for (const [token, waiting] of this.waiting) {
      if (waiting.deadline > now) break;
      this.waiting.delete(token);
      waiting.reject(new BusRequestError('request timed out', 'timeout'));
    }
  }

  // Answers to requests sent before a disconnect never come (as nats.js does, fail them now).
  private async followStatus(): Promise<void> {
    for await (const status of this.nc.status())
      if (status.type === 'disconnect') this.failWaiting();
    // Closed.
    clearInterval(this.sweeper);
    this.failWaiting();
  }

  private failWaiting(): void {
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const w of waiting)
      w.reject(new BusRequestError('connection disconnected', 'disconnected'));
  }
}
