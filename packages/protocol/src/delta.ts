/**
 * Live text of a model reply, sent on an agent's event stream as
 * `event: delta` frames. Not stored: the reply is on the record once the
 * model call ends (model.replied).
 */
export interface DeltaFrame {
  run: string;
  text: string;
  /** The model call is being tried again: the text streamed so far is void. */
  reset?: boolean;
  retry?: ModelRetry;
}

/** Why a model call is tried again: which attempt comes next, after how long, and the error. */
export interface ModelRetry {
  attempt: number;
  delay_ms: number;
  error: string;
}
