/**
 * Policy decisions per second: 1,000,000 decide() calls over a 50-rule policy
 * with conditions. Target: at least 1,000,000 per second.
 * Run: npx tsx bench/policy.ts
 */
// Through the package's public exports, like every bench: `npm run build` first.
import { compilePolicy, decide, type CallToDecide, type Decision, type PolicyRule } from "wardrik";

const DECISIONS_TO_RUN = 1_000_000;
const WARM_UP = 200_000;

const namespaces = ["workers", "files", "linear", "github", "slack", "billing", "crm", "mcp-search"];
const decisions: Decision[] = ["deny", "ask", "allow"];

function buildRules(): PolicyRule[] {
  const rules: PolicyRule[] = [];
  for (let i = 0; rules.length < 49; i++) {
    const ns = namespaces[i % namespaces.length]!;
    const decision = decisions[i % decisions.length]!;
    switch (i % 6) {
      case 0:
        rules.push({ tool: `${ns}/refund_${i}`, when: { amount: { gt: 100 + i } }, decision });
        break;
      case 1:
        rules.push({ tool: `${ns}/find_*`, when: { "customer.address.country": { in: ["DE", "FR", `X${i}`] } }, decision });
        break;
      case 2:
        rules.push({ tool: `${ns}/update_${i}`, when: { "items.0.sku": { matches: `^SKU-${i}-[0-9]+$` } }, decision });
        break;
      case 3:
        rules.push({ tool: `${ns}/*`, when: { env: { eq: "prod" }, "meta.priority": { gte: 3, lt: 9 } }, decision });
        break;
      case 4:
        rules.push({ tool: `*/delete_*`, when: { force: { eq: true }, reason: { exists: false } }, decision: "deny" });
        break;
      default:
        rules.push({ tool: `${ns}/send_${i}`, when: { to: { matches: "@example\\.com$" }, count: { lte: 10 } }, decision });
    }
  }
  rules.push({ tool: "files/*", decision: "allow" });
  return rules;
}

function buildCalls(): CallToDecide[] {
  const calls: CallToDecide[] = [];
  for (let i = 0; i < 97; i++) {
    const ns = namespaces[i % namespaces.length]!;
    const tools = [`refund_${i % 50}`, `find_order`, `update_${i % 50}`, `delete_all`, `send_${i % 50}`, `read_thing`];
    calls.push({
      tool: `${ns}/${tools[i % tools.length]!}`,
      readOnly: i % 3 === 0,
      args: {
        amount: (i * 37) % 400,
        env: i % 2 === 0 ? "prod" : "dev",
        force: i % 4 === 0,
        to: i % 5 === 0 ? "ops@example.com" : "someone@elsewhere.org",
        count: i % 15,
        meta: { priority: i % 10 },
        customer: { id: `c${i}`, address: { country: ["DE", "US", "FR", "JP"][i % 4] } },
        items: [{ sku: `SKU-${i % 50}-${i}`, qty: 1 }],
      },
    });
  }
  return calls;
}

const policy = compilePolicy({ name: "bench", rules: buildRules() });
const calls = buildCalls();

function run(count: number): Record<Decision, number> {
  const seen: Record<Decision, number> = { allow: 0, ask: 0, deny: 0 };
  for (let i = 0; i < count; i++) seen[decide(policy, calls[i % calls.length]!).decision]++;
  return seen;
}

run(WARM_UP);
const started = process.hrtime.bigint();
const seen = run(DECISIONS_TO_RUN);
const seconds = Number(process.hrtime.bigint() - started) / 1e9;

// Guards against a policy or call set that silently stops exercising the rules.
if (seen.allow === 0 || seen.ask === 0 || seen.deny === 0) throw new Error(`degenerate workload: ${JSON.stringify(seen)}`);

console.log(
  JSON.stringify({
    workload: "policy",
    decisions: DECISIONS_TO_RUN,
    seconds: Number(seconds.toFixed(4)),
    decisions_per_s: Math.round(DECISIONS_TO_RUN / seconds),
  }),
);
