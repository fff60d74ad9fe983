import type { WardrikCloudEvent } from "@wardrik/protocol";
import { useEffect, useMemo, useState } from "preact/hooks";
import { decidedBy, editOf, type Edit } from "./approval-info";
import type { Api } from "./client/api";
import { shortType } from "./format";
import type { StreamState } from "./org-feed";

export interface LiveCall {
  call: string;
  tool: string;
  /** What the call runs with: a person's edit, once approved with one, else the model's arguments. */
  args?: unknown;
  status: string;
  output?: unknown;
  error?: string;
  edit?: Edit;
  /** Who approved or denied it, when the event says. */
  by?: string;
}

/** A call a person approved with edited arguments. */
export interface EditedCall {
  edit: Edit;
  by?: string;
}

/** A turn as its events tell it, with the model's text as it streams. */
export interface LiveTurn {
  run: string;
  /** The conversation's key; unknown until turn.started (or the turn's view) says. */
  conversation?: string;
  /** The texts of the messages the turn took, when their message.queued events were read. */
  asked?: string[];
  status: "running" | "parked" | "completed" | "failed" | "cancelled";
  /** The text of each model reply of the turn, the last one growing while it streams. */
  segments: string[];
  /** The last segment is a reply still streaming (deltas arrived, model.replied not yet). */
  streaming: boolean;
  calls: LiveCall[];
  reason?: string;
}

/** How many of the agent's latest events the page reads back when it opens. */
const BACKLOG = 300;
/** Events kept in memory for the events list. */
const KEEP = 2000;
const ENDS: Record<string, LiveTurn["status"]> = { "turn.completed": "completed", "turn.failed": "failed", "turn.cancelled": "cancelled" };
const CALL_STATUS: Record<string, string> = {
  "approval.requested": "waiting",
  "question.asked": "waiting",
  "approval.granted": "approved",
  "approval.denied": "denied",
  "call.started": "running",
  "call.completed": "completed",
  "call.failed": "failed",
  "call.killed": "killed",
  "call.timed_out": "timed_out",
};

/**
 * One agent's event stream (`GET /v1/agents/{id}/events/stream`), read from a
 * little before the live end: it feeds the events list, the running turn
 * (with `delta` frames: model text as it arrives) and tells the page when to
 * re-read the agent's details and history.
 */
export class AgentStream {
  events: WardrikCloudEvent[] = [];
  readonly turns = new Map<string, LiveTurn>();
  /** Every call of the agent approved with edited arguments, by call ID: the history shows what they ran with. */
  readonly edits = new Map<string, EditedCall>();
  /** Message texts by message ID, from message.queued, until their turn starts. */
  private readonly queued = new Map<string, string>();
  state: StreamState = "connecting";
  /** The sequence number the backlog started after. */
  from = 0;
  private readonly eventListeners = new Set<(e: WardrikCloudEvent) => void>();
  private readonly changeListeners = new Set<() => void>();
  private frame = 0;

  constructor(
    private readonly api: Api,
    readonly agentId: string,
  ) {}

  async start(signal: AbortSignal): Promise<void> {
    const head = await this.api.events(this.agentId, { after: 0, limit: 1 });
    this.from = Math.max(0, head.last_seq - BACKLOG);
    if (signal.aborted) return;
    void this.loadEdits(head.last_seq);
    this.api.followAgent(this.agentId, this.from, {
      signal,
      onFrame: (f) => {
        if (f.event === "event") this.onEvent(JSON.parse(f.data) as WardrikCloudEvent);
        else if (f.event === "delta") this.onDelta(JSON.parse(f.data) as { run: string; text: string; reset?: boolean });
        this.changed();
      },
      onState: (s) => {
        this.state = s;
        this.changed();
      },
    });
  }

  onEventOf(listener: (e: WardrikCloudEvent) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  onChange(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** Reads events from before the backlog, for the events list. */
  async loadEarlier(count = 500): Promise<void> {
    if (this.from === 0) return;
    const after = Math.max(0, this.from - count);
    const page = await this.api.events(this.agentId, { after, limit: this.from - after });
    this.events = [...page.events, ...this.events];
    this.from = after;
    this.changed();
  }

  /** The edited approvals up to `upto` (the live stream brings the later ones). */
  private async loadEdits(upto: number): Promise<void> {
    try {
      for (let after = 0; after < upto;) {
        // Only approvals whose data names original_args: those a person edited.
        const page = await this.api.events(this.agentId, { after, limit: 1000, types: ["approval.granted"], text: "original_args" });
        for (const e of page.events) this.noteEdit(e.data);
        if (page.events.length < 1000) break;
        after = page.events.at(-1)!.seq;
      }
      this.changed();
    } catch {
      // The history then shows the model's arguments; the events still tell the edit.
    }
  }

  private noteEdit(d: Record<string, unknown>): EditedCall | undefined {
    const edit = editOf(d);
    if (!edit || typeof d.call !== "string") return undefined;
    const by = decidedBy(d);
    const edited: EditedCall = { edit, ...(by !== undefined ? { by } : {}) };
    this.edits.set(d.call, edited);
    return edited;
  }

  private onEvent(e: WardrikCloudEvent): void {
    if (this.events.length > 0 && e.seq <= this.events[this.events.length - 1]!.seq) return;
    this.events.push(e);
    if (this.events.length > KEEP) this.events.splice(0, this.events.length - KEEP);
    const type = shortType(e.type);
    const run = e.run;
    const d = e.data;
    if (type === "message.queued" && typeof d.message === "string") this.queued.set(d.message, String(d.text ?? ""));
    if (run !== undefined) {
      const turn = this.turn(run, type === "turn.started" ? (d.conversation as string) : undefined);
      if (type === "turn.started") {
        const ids = Array.isArray(d.messages) ? (d.messages as string[]) : [];
        if (ids.length > 0 && ids.every((id) => this.queued.has(id))) turn.asked = ids.map((id) => this.queued.get(id)!);
        for (const id of ids) this.queued.delete(id);
      } else if (type === "turn.parked") turn.status = "parked";
      else if (type === "turn.resumed") turn.status = "running";
      else if (ENDS[type]) {
        turn.status = ENDS[type];
        if (typeof d.reason === "string") turn.reason = d.reason;
      } else if (type === "model.replied") {
        // The stored reply is the whole text, whatever deltas were missed.
        if (turn.streaming) turn.segments[turn.segments.length - 1] = String(d.text ?? "");
        else turn.segments.push(String(d.text ?? ""));
        turn.streaming = false;
      } else if (type === "round.saved") {
        for (const c of (d.calls as { call: string; tool: string; args: unknown }[] | undefined) ?? [])
          turn.calls.push({ call: c.call, tool: c.tool, args: c.args, status: "planned" });
      } else if (type === "call.decided" || CALL_STATUS[type]) {
        const call = turn.calls.find((c) => c.call === d.call) ?? this.addCall(turn, d);
        if (CALL_STATUS[type]) call.status = CALL_STATUS[type];
        else if (d.decision === "deny") call.status = "denied";
        if (type === "call.completed") call.output = d.output;
        if (typeof d.error === "string") call.error = d.error;
        const edited = type === "approval.granted" ? this.noteEdit(d) : undefined;
        if (edited) {
          call.args = edited.edit.args;
          call.edit = edited.edit;
        }
        const by = type === "approval.granted" || type === "approval.denied" ? decidedBy(d) : undefined;
        if (by !== undefined) call.by = by;
      }
    }
    for (const l of this.eventListeners) l(e);
  }

  private onDelta(f: { run: string; text: string; reset?: boolean }): void {
    const turn = this.turn(f.run);
    // The first delta after a finished reply starts the next one.
    if (!turn.streaming) {
      turn.segments.push("");
      turn.streaming = true;
    }
    const last = turn.segments.length - 1;
    turn.segments[last] = f.reset ? f.text : turn.segments[last] + f.text;
  }

  private addCall(turn: LiveTurn, d: Record<string, unknown>): LiveCall {
    const call: LiveCall = { call: String(d.call), tool: String(d.tool), status: "planned" };
    turn.calls.push(call);
    return call;
  }

  /** The turn of `run`; a turn that started before the backlog learns its conversation from its view. */
  private turn(run: string, conversation?: string): LiveTurn {
    let t = this.turns.get(run);
    if (!t) {
      t = { run, status: "running", segments: [], streaming: false, calls: [], ...(conversation !== undefined ? { conversation } : {}) };
      this.turns.set(run, t);
      if (conversation === undefined) {
        const known = t;
        this.api.turn(this.agentId, run).then(
          (v) => {
            known.conversation = v.conversation;
            this.changed();
          },
          () => undefined,
        );
      }
    } else if (conversation !== undefined) t.conversation = conversation;
    return t;
  }

  /** Listeners hear of changes once per animation frame, however many frames arrived. */
  private changed(): void {
    if (this.frame !== 0) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      for (const l of this.changeListeners) l();
    });
  }
}

/** The agent's stream for as long as the page shows it; re-renders when it changes. */
export function useAgentStream(api: Api, agentId: string): AgentStream {
  const stream = useMemo(() => new AgentStream(api, agentId), [api, agentId]);
  const [, setVersion] = useState(0);
  useEffect(() => {
    const ac = new AbortController();
    const off = stream.onChange(() => setVersion((v) => v + 1));
    stream.start(ac.signal).catch(() => {
      stream.state = "stopped";
      setVersion((v) => v + 1);
    });
    return () => {
      off();
      ac.abort();
    };
  }, [stream]);
  return stream;
}
