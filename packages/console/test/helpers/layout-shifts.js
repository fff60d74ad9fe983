// Runs in the page before its own scripts (browser.ts adds it as an init script): records every
// layout shift as the browser measures it (the metric behind CLS) in window.__shifts, so a test
// can check that streaming text moves nothing. Plain JS: it runs in Chromium, not in Node.
window.__shifts = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const nodes = (e.sources ?? []).map((s) => {
      const el = s.node;
      return el ? `${el.nodeName.toLowerCase()}.${typeof el.className === "string" ? el.className : ""}` : "?";
    });
    window.__shifts.push({ value: e.value, at: e.startTime, recent: e.hadRecentInput, nodes });
  }
}).observe({ type: "layout-shift", buffered: true });
