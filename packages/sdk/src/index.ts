export { WardrikClient } from "./client.js";
export type { ClientOptions, FollowOptions } from "./client.js";
