// core.js: the one import every page's script starts from (import * as C
// from "./core.js"). It holds nothing of its own: it gathers the shared
// modules, each one idea —
//   protocol.js   the websocket client: ids, resume, Backoff, the server's
//                 limits from its welcome, its errors and stop reasons in words
//   settings.js   the page's data block, sampling defaults, settings ⇄ URL
//   format.js     numbers: digits, percentages, bytes, counts, milliseconds
//   tokentext.js  token text: visible whitespace, byte chips
//   colors.js     stylesheet colors and the heat and sequential scales
//   dom.js        $, el and clear
export { Client, Backoff, serverLimits, openSessions, connectText, errorText, stopReason } from "./protocol.js";
export { pageData, samplingDefaults, readURL, writeURL, samplingPayload } from "./settings.js";
export { fmt, pct, bytes, count, ms } from "./format.js";
export { visible, pieceBytes, hexByte, isPartial, tokenLabel } from "./tokentext.js";
export { cssVar, isDark, heat, seq } from "./colors.js";
export { el, clear, $ } from "./dom.js";
