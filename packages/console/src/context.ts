import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { Api } from "./client/api";
import type { OrgFeed } from "./org-feed";

export const ApiContext = createContext<Api | undefined>(undefined);
export const FeedContext = createContext<OrgFeed | undefined>(undefined);

export function useApi(): Api {
  const api = useContext(ApiContext);
  if (!api) throw new Error("useApi outside the signed-in shell");
  return api;
}

export function useFeed(): OrgFeed {
  const feed = useContext(FeedContext);
  if (!feed) throw new Error("useFeed outside the signed-in shell");
  return feed;
}
