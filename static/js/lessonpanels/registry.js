// registry.js: lesson panel kinds that live in their own modules. A module
// in lessonpanels/ registers a view; lessons.js runs it as
// view(options, out, section, api) → Promise, where api carries the
// lesson page's Run (one websocket session), payload(options, extra),
// setLive(section, key, value), pick(events, stage) and table(head, rows).
export const panelViews = {};

export function register(kind, view) { panelViews[kind] = view; }
