/** A policy that allows every tool and caps each turn's spend at `perTurnUsd` dollars. */
export function cappedPolicy(perTurnUsd: number): string {
  return `description: A small budget per turn.
budget:
  per_turn_usd: ${perTurnUsd}
rules:
  - tool: "*"
    decision: allow
`;
}
