import type { AgentDetail } from "@wardrik/protocol";
import { usd } from "../format";

/** Today's spend against the agent's caps: "$0.42 of $5.00 a day". */
export function Spend({ spend }: { spend: AgentDetail["spend"] }) {
  const day = spend.per_day_cap_usd;
  const share = day ? Math.min(1, spend.today_usd / day) : undefined;
  return (
    <span class="spend">
      <span class="num">{usd(spend.today_usd)}</span>
      {day !== undefined && <span class="cap"> of {usd(day)} a day</span>}
      {spend.per_turn_cap_usd !== undefined && <span class="cap"> · {usd(spend.per_turn_cap_usd)} a turn</span>}
      {share !== undefined && (
        <meter
          class="spend-meter"
          min={0}
          max={1}
          low={0.7}
          high={0.9}
          optimum={0}
          value={share}
          aria-label="Share of the daily cap spent"
        />
      )}
    </span>
  );
}
