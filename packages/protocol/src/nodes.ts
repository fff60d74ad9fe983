import { z } from "zod";

export const NodeView = z
  .object({
    name: z.string(),
    url: z.string().describe("Where the node's API answers"),
    pid: z.number().int(),
    host: z.string(),
    started_at: z.string(),
    last_heartbeat: z.string().describe("When the node last said it lives (the database's clock)"),
    alive: z.boolean().describe("Whether it said so within the lease"),
    agents: z.array(z.string()).describe("The token's org's agents this node drives now"),
  })
  .meta({ id: "Node" });
export type NodeView = z.infer<typeof NodeView>;

export const NodeList = z.object({ nodes: z.array(NodeView) }).meta({ id: "NodeList" });
export type NodeList = z.infer<typeof NodeList>;
