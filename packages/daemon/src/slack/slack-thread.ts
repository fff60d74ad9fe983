/** A Slack thread is one conversation: its key holds the channel and the thread's root ts. */

export interface SlackThread {
  channel: string;
  /** The root message's ts, as Slack writes it (1700000001.000100). */
  threadTs: string;
}

const KEY = /^slack:([A-Z0-9]+):(\d+\.\d+)$/;

/** `slack:C0123ABCD:1700000001.000100` */
export function conversationKey(t: SlackThread): string {
  return `slack:${t.channel}:${t.threadTs}`;
}

/** The thread a conversation key names, or undefined when it is not a Slack thread's. */
export function threadOf(key: string): SlackThread | undefined {
  const m = KEY.exec(key);
  return m ? { channel: m[1]!, threadTs: m[2]! } : undefined;
}
