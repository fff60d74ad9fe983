import type { WardrikCloudEvent } from "@wardrik/protocol";
import { useState } from "preact/hooks";
import { describeEvent } from "../event-line";
import { clock, shortType } from "../format";
import { turnHref } from "../router";
import { JsonBlock } from "./json-block";

interface Props {
  event: WardrikCloudEvent;
  agentId: string;
  /** The arguments of a call, for events that name a call without them. */
  argsOf: (call: string) => unknown;
}

/** One event as a readable line (what happened, to what, for how much), with its raw JSON a click away. */
export function EventRow({ event: e, agentId, argsOf }: Props) {
  const [raw, setRaw] = useState(false);
  const type = shortType(e.type);
  const line = describeEvent(e, argsOf);
  const rawId = `event-${e.seq}-raw`;
  return (
    <li class={`event tone-${line.tone}`}>
      <div class="event-line">
        <span class="seq">#{e.seq}</span>
        <time dateTime={e.time}>{clock(e.time)}</time>
        <span class="etype">{type}</span>
        <span class="event-text">{line.text}</span>
        <span class="event-tools">
          {e.run && (
            <a class="small-link" href={turnHref(agentId, e.run)} title={`The timeline of turn ${e.run}`}>
              Turn
            </a>
          )}
          <button
            type="button"
            class="small"
            aria-expanded={raw}
            aria-controls={rawId}
            aria-label={`Raw JSON of event ${e.seq}, ${type}`}
            onClick={() => setRaw(!raw)}
          >
            JSON
          </button>
        </span>
      </div>
      {line.detail && <p class="event-detail">{line.detail}</p>}
      {raw && (
        <div id={rawId}>
          <JsonBlock value={e} label={`Event ${e.seq}, ${type}, as JSON`} />
        </div>
      )}
    </li>
  );
}
