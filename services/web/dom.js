// Small helpers of the browser table: DOM building, the live region, local storage,
// seat names and refusals told as sentences (docs/WEB.md).

import { ApiError } from "./api.js";

const SVG_NS = "http://www.w3.org/2000/svg";

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  fill(el, attrs, children);
  return el;
}

export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  fill(el, attrs, children);
  return el;
}

function fill(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.setAttribute("class", v);
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "text") el.textContent = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

const $live = document.getElementById("live");

export function announce(text) {
  $live.append(h("p", {}, text));
  while ($live.childElementCount > 5) $live.firstElementChild.remove();
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const num = (v) => Number(v || 0);

// "1 card", "3 cards"
export function plural(n, one, many = `${one}s`) { return `${n} ${n === 1 ? one : many}`; }

export function stored(id) {
  try { return JSON.parse(localStorage.getItem(`glintwick.seat.${id}`) || "null"); } catch { return null; }
}
export function store(id, value) { localStorage.setItem(`glintwick.seat.${id}`, JSON.stringify(value)); }

export function readJson(storage, key, otherwise) {
  try { return JSON.parse(storage.getItem(key) || "null") ?? otherwise; } catch { return otherwise; }
}

// house bots offered to people by strength, weakest first (docs/BOTS.md measures them)
export const STRENGTHS = [["random", "Beginner"], ["greedy", "Casual"], ["strong", "Skilled"], ["expert", "Expert"], ["best", "Champion"]];
export function strengthName(bot) {
  const found = STRENGTHS.find(([v]) => v === bot);
  return found ? found[1] : `${bot[0].toUpperCase()}${bot.slice(1)}`;
}

// a seat as people name it: the player's name, a house bot by its strength ("Casual
// bot 2"), "you" for this browser's own seat (capitalised where a sentence starts)
export function seatName(game, seat, mine, { you = false } = {}) {
  if (you && seat === mine) return "you";
  const info = game && game.seatInfo ? game.seatInfo[seat] : null;
  let name = info && info.name ? info.name : `Seat ${seat + 1}`;
  if (info && info.bot) name = `${strengthName(info.bot)} bot ${seat + 1}`;
  return seat === mine ? `${name} (you)` : name;
}

export const capital = (text) => text.charAt(0).toUpperCase() + text.slice(1);

// the server's refusals (docs/API.md, "Errors") as sentences for people
const REASONS = {
  STALE_VERSION: "The table moved on before your move arrived. Look again and choose.",
  CONCURRENT_UPDATE: "Someone moved at the same moment. Look again and choose.",
  GAME_FULL: "This table is full: every seat is taken. You can watch it instead.",
  GAME_NOT_FOUND: "There is no such table (it may have finished a while ago).",
  BAD_TOKEN: "This browser no longer holds a seat at this table.",
  NO_SUCH_SEAT: "That seat does not exist at this table.",
  NOT_YOUR_TURN: "It is not your turn.",
  MUST_DRAW_FIRST: "Draw first: from the stock or the discard pile.",
  ALREADY_DREW: "You have already drawn this turn.",
  ALREADY_OPEN: "You have already laid your contract.",
  ALREADY_ANSWERED: "You have already answered this May I?.",
  NOT_OPEN: "Lay your contract first.",
  OWN_DISCARD: "You cannot claim your own discard.",
  NO_CLAIM_WINDOW: "Too late: the May I? window has closed.",
  CLAIM_WINDOW_OPEN: "Wait: a May I? window is open.",
  CLAIM_STOCK_EMPTY: "Nobody can claim now: the stock has no penalty card left.",
  BLOCKED_DISCARD: "You cannot discard the card you just took from the discard pile.",
  LAST_CARD_BLOCKED: "That card cannot be your last discard.",
  NO_DISCARD_THIS_ROUND: "No discards this round: end your turn instead.",
  LAYOFF_ON_OPENING_TURN: "You cannot lay off in the turn you lay your contract.",
  LAYOFF_DOES_NOT_FIT: "That card does not fit that meld.",
  LAYOFF_JOKER_NOT_ALLOWED: "A joker cannot be laid off here.",
  POSITION_HELD_BY_JOKER: "A joker already holds that place.",
  SWAP_NOT_ALLOWED: "That joker cannot be swapped.",
  SWAP_DOES_NOT_MATCH: "That card does not stand where the joker does.",
  STOCK_EMPTY: "The stock is empty.",
  DISCARD_PILE_EMPTY: "The discard pile is empty.",
  DISCARD_DRAW_NOT_ALLOWED: "You cannot take the discard now.",
  GAME_OVER: "The game is over.",
  RESOURCE_EXHAUSTED: "Too many requests: wait a moment and try again.",
  UNAVAILABLE: "The server is busy: try again in a moment.",
  STORE_UNAVAILABLE: "The server is briefly unavailable: try again in a moment.",
};

export function errorText(e) {
  if (e instanceof ApiError) {
    if (REASONS[e.reason]) return REASONS[e.reason];
    if (e.status >= 500 || e.status === 0) return "The server could not answer: try again in a moment.";
    return `The server refused: ${e.message}`;
  }
  if (e instanceof TypeError) return "The server cannot be reached: check the connection.";
  return String(e && e.message ? e.message : e);
}
