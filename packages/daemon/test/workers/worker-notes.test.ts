/**
 * Which worker a call was sent to is written a moment after the call left:
 * a call answered meanwhile needs no note (no commit of its own for a quick
 * call), and the notes of the calls still running go in one write.
 */
import { expect, it } from "vitest";
import { WorkerNotes } from "../../src/worker-notes.js";
import { waitFor } from "../helpers/wait.js";

it("writes the notes of the calls still unanswered after the moment, together, and none for calls answered meanwhile", async () => {
  const writes: { id: string; worker: string }[][] = [];
  const notes = new WorkerNotes(
    (due) => Promise.resolve(void writes.push(due)),
    () => undefined,
    20,
  );
  const answered = new Set<string>();
  for (const id of ["call_1", "call_2", "call_3"]) notes.note(id, `{"name":"w"}`, () => answered.has(id));
  // Answered before the moment is over: its note is never written.
  answered.add("call_2");
  await waitFor(() => writes.length > 0, "the notes written");
  expect(writes).toEqual([
    [
      { id: "call_1", worker: `{"name":"w"}` },
      { id: "call_3", worker: `{"name":"w"}` },
    ],
  ]);

  // Every call answered in time: nothing is written at all.
  notes.note("call_4", `{"name":"w"}`, () => true);
  await new Promise((r) => setTimeout(r, 60));
  expect(writes).toHaveLength(1);
});
