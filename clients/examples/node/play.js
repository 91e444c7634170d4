// A whole Glintwick game from Node.js, built from the repository's proto/ alone: what an
// integrator in another language writes (docs/API.md, "Playing" and "Errors").
//
// It creates a whiskertrail game for two, joins both seats, asks for a third seat to show
// how a refusal reads (the machine-readable reason of the status's google.rpc.ErrorInfo),
// then plays both seats over ONE Play stream: each seat's session is subscribed with its
// own token, every prompt is answered by an act at the prompt's version, and each session
// ends with `closed` (the seat's final view). It prints its progress on stderr and the
// game's end as one JSON line on stdout, and exits 0 once the game is over.
//
//   npm ci
//   node play.js [--target 127.0.0.1:50051] [--seed c0ffee] [--timeout 120]
//
// No generated code: proto-loader reads the .proto files at run time, and protobufjs (the
// library under it) decodes the error details.

import { randomUUID } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

import grpc from "@grpc/grpc-js";
import protoLoader from "@grpc/proto-loader";
import protobuf from "protobufjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));

const { values: options } = parseArgs({
  options: {
    target: { type: "string", default: "127.0.0.1:50051" },
    seed: { type: "string", default: "c0ffee" },
    proto: { type: "string", default: path.resolve(HERE, "../../../proto") },
    timeout: { type: "string", default: "120" },
  },
});

// How long to wait for the server's status after half-closing the stream, before
// cancelling the call instead.
const HALF_CLOSE_WAIT_MS = 3000;
// A unary call's deadline.
const CALL_DEADLINE_MS = 10000;

// ------------------------------------------------------------------- the proto files

// The service: messages are plain objects with the proto's snake_case field names,
// 64-bit integers as strings (versions), enums by name, and each oneof's case named by
// a field of the oneof's name (`response.kind === "prompt"`).
const definition = protoLoader.loadSync("glintwick/v1/game.proto", {
  includeDirs: [options.proto],
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});
const { GameService } = grpc.loadPackageDefinition(definition).glintwick.v1;

// The rich error model: a refused call's `grpc-status-details-bin` trailer is a
// google.rpc.Status whose details (google.protobuf.Any) hold a google.rpc.ErrorInfo
// (domain "glintwick.dev"; its reason is a value of glintwick.v1.ErrorReason without the
// ERROR_REASON_ prefix) and, when waiting helps, a google.rpc.RetryInfo.
const errorModel = new protobuf.Root();
errorModel.resolvePath = (_origin, target) => path.join(options.proto, target);
errorModel.loadSync(
  ["google/rpc/status.proto", "google/rpc/error_details.proto", "glintwick/v1/errors.proto"],
  { keepCase: true },
);
const Status = errorModel.lookupType("google.rpc.Status");
const ErrorReason = errorModel.lookupEnum("glintwick.v1.ErrorReason");

/** What a refused call says: its status code, message and every detail, decoded. */
function refusal(error) {
  const said = { code: grpc.status[error.code], message: error.details };
  const [trailer] = error.metadata?.get("grpc-status-details-bin") ?? [];
  if (trailer === undefined) return said;
  for (const any of Status.decode(trailer).details) {
    const name = any.type_url.slice(any.type_url.lastIndexOf("/") + 1);
    const type = errorModel.lookup(name);
    if (!(type instanceof protobuf.Type)) continue; // a detail this client does not know
    const detail = type.toObject(type.decode(any.value), { longs: Number });
    if (name === "google.rpc.ErrorInfo") {
      said.reason = detail.reason;
      said.domain = detail.domain;
      said.listed = `ERROR_REASON_${detail.reason}` in ErrorReason.values;
    } else if (name === "google.rpc.RetryInfo") {
      const delay = detail.retry_delay ?? {};
      said.retry_after_seconds = (delay.seconds ?? 0) + (delay.nanos ?? 0) / 1e9;
    }
  }
  return said;
}

// ------------------------------------------------------------------- unary calls

const client = new GameService(options.target, grpc.credentials.createInsecure());

/** A unary call as a promise (rejected with grpc-js's error: code, details, metadata).
 * These need no credential; a seat's calls would send its token as metadata,
 * `authorization: Bearer <token>`. */
function call(method, request) {
  return new Promise((resolve, reject) => {
    client[method](request, { deadline: Date.now() + CALL_DEADLINE_MS }, (error, reply) =>
      error ? reject(error) : resolve(reply),
    );
  });
}

function log(line) {
  process.stderr.write(`${line}\n`);
}

// ------------------------------------------------------------------- the player

// A simple deterministic player, choosing among the prompt's legal actions: lay the
// contract as soon as it may, then every meld and lay-off it can; draw the discard
// pile's top card when the hand holds its rank, else from the stock; pass every May I?;
// and end its turn discarding a card of the rank it holds fewest of (a set's start is
// kept; ties: the highest card; a joker last).
const PREFERENCE = ["lay_contract", "extra_meld", "lay_off", "draw", "pass_claim", "end_turn", "discard"];

function choose({ legal_actions: legal, view }) {
  for (const kind of PREFERENCE) {
    const matching = legal.filter((action) => action.kind === kind);
    if (matching.length === 0) continue;
    if (kind === "draw") return chooseDraw(matching, view);
    if (kind === "discard") return chooseDiscard(matching, view);
    return matching[0];
  }
  return legal[0]; // a kind this player does not know: still a legal action
}

// a card's rank as its code writes it: "7H" → "7", "TD" → "T"; a joker is "JK"
const rankOf = (card) => (card.code === "JK" ? "JK" : card.code.slice(0, -1));

function heldRanks(hand) {
  const held = new Map();
  for (const card of hand) held.set(rankOf(card), (held.get(rankOf(card)) ?? 0) + 1);
  return held;
}

function chooseDraw(draws, view) {
  const top = view.discard_top;
  const fromPile = draws.find((action) => action.draw.source === "DRAW_SOURCE_DISCARD");
  if (top && fromPile && heldRanks(view.hand).has(rankOf(top))) return fromPile;
  return draws[0];
}

function chooseDiscard(discards, view) {
  const cards = new Map(view.hand.map((card) => [card.id, card]));
  const held = heldRanks(view.hand);
  const weight = (action) => {
    const card = cards.get(action.discard.card);
    return card.code === "JK" ? Infinity : held.get(rankOf(card));
  };
  // the fewest held, and of those the last listed (a hand is in card order)
  return discards.reduce((best, action) => (weight(action) <= weight(best) ? action : best));
}

/** Both seats over one Play stream until each session is closed; what the stream saw. */
function playBothSeats(gameId, seats) {
  const sessions = new Map(
    seats.map(({ seat }) => [seat, { prompts: 0, applied: 0, closed: null }]),
  );
  const refused = []; // acts (or messages) the server refused: none expected
  const stream = client.Play(); // the seats' tokens travel in their subscribes
  return new Promise((resolve) => {
    let ending = null; // how the stream ended: "ok" (the server's status) or "cancelled"
    let waiting = null;
    const actors = new Map(); // request_id: the seat that sent the act, until its result
    function readResult(result) {
      // (named by its request_id: a result in a prompt may answer another seat's act)
      const seat = actors.get(result.request_id);
      actors.delete(result.request_id);
      if (result.error) refused.push({ seat, ...result.error });
      else sessions.get(seat).applied += 1;
    }
    stream.on("data", (response) => {
      const session = sessions.get(response.seat);
      switch (response.kind) {
        case "prompt":
          // (results_in_prompts: the answer to an earlier act of this game rides in it)
          if (response.prompt.result) readResult(response.prompt.result);
          session.prompts += 1;
          {
            const requestId = randomUUID(); // the act's idempotency key: resend it, never reuse it
            actors.set(requestId, response.seat);
            stream.write({
              act: {
                game_id: gameId,
                seat: response.seat,
                expected_version: response.prompt.version,
                request_id: requestId,
                action: choose(response.prompt),
              },
            });
          }
          break;
        case "result":
          readResult(response.result);
          break;
        case "closed":
          session.closed = response.closed;
          if (response.closed.error) refused.push({ seat: response.seat, ...response.closed.error });
          if ([...sessions.values()].every((each) => each.closed)) finish();
          break;
        case "error":
          refused.push({ seat: response.seat ?? null, ...response.error });
          break;
        default: // the snapshot where a session starts: the first prompt has the same view
      }
    });
    // Every session is over: half-close (this client sends nothing more) and wait for
    // the server to end the stream with its status. A server that leaves a half-closed
    // stream open is cancelled after HALF_CLOSE_WAIT_MS; the summary says which happened.
    function finish() {
      stream.end();
      waiting = setTimeout(() => {
        ending = "cancelled";
        stream.cancel();
      }, HALF_CLOSE_WAIT_MS);
    }
    stream.on("error", () => {}); // (the status below tells it, CANCELLED after a cancel)
    stream.on("status", (status) => {
      clearTimeout(waiting);
      ending ??= status.code === grpc.status.OK ? "ok" : grpc.status[status.code];
      resolve({ sessions, refused, ending });
    });
    // prompts only: this client decides on a prompt's view alone, and holding both
    // seats it would otherwise receive every move's events twice; results in prompts:
    // an act is answered inside the next prompt of the game (either seat's)
    for (const { seat, token } of seats) {
      stream.write({
        subscribe: { game_id: gameId, seat, token, prompts_only: true, results_in_prompts: true },
      });
    }
  });
}

// ------------------------------------------------------------------- the game

async function main() {
  const game = await call("CreateGame", {
    rule_set_name: "whiskertrail",
    seats: 2,
    seed: options.seed,
  });
  log(`game ${game.game_id}: whiskertrail, 2 seats, seed ${options.seed}`);

  const seats = [];
  for (const name of ["ann", "bob"]) {
    // a join's request_id lets it be retried if its answer is lost (a fresh UUID per join)
    const joined = await call("JoinGame", { game_id: game.game_id, name, request_id: randomUUID() });
    seats.push({ seat: joined.seat, token: joined.token });
    log(`${name} joined: seat ${joined.seat}`);
  }

  // A third player at a full table: refused, and the reason is machine-readable.
  let refusedJoin = null;
  try {
    await call("JoinGame", { game_id: game.game_id, name: "cat", request_id: randomUUID() });
  } catch (error) {
    refusedJoin = { call: "JoinGame", ...refusal(error) };
    log(`cat refused: ${refusedJoin.code} ${refusedJoin.reason} (${refusedJoin.domain})`);
  }

  const played = await playBothSeats(game.game_id, seats);
  const final = played.sessions.get(seats[0].seat).closed?.final_view;
  const summary = {
    game_id: game.game_id,
    game_over: Boolean(final?.game_over),
    version: Number(final?.version ?? 0),
    rounds: final?.rounds ?? 0,
    seed: final?.seed ?? "",
    scores: Object.fromEntries((final?.players ?? []).map((player) => [player.seat, player.score])),
    winners: final?.winners ?? [],
    seats: Object.fromEntries(
      [...played.sessions].map(([seat, { prompts, applied, closed }]) => [
        seat,
        { prompts, applied, game_over: Boolean(closed?.final_view?.game_over) },
      ]),
    ),
    refused_join: refusedJoin,
    play_refusals: played.refused,
    stream_end: played.ending,
  };
  log(
    `game over at version ${summary.version}: scores ${JSON.stringify(summary.scores)}, ` +
      `winners ${JSON.stringify(summary.winners)}; the stream ended: ${summary.stream_end}`,
  );
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  const everySeatSawTheEnd = Object.values(summary.seats).every((seat) => seat.game_over);
  return summary.game_over && everySeatSawTheEnd && refusedJoin?.reason !== undefined;
}

const timeout = setTimeout(() => {
  log(`no game over in ${options.timeout} s`);
  process.exit(1);
}, Number(options.timeout) * 1000);

main()
  .then((finished) => {
    process.exitCode = finished ? 0 : 1;
  })
  .catch((error) => {
    log(`failed: ${error.stack ?? error}`);
    process.exitCode = 1;
  })
  .finally(() => {
    clearTimeout(timeout);
    client.close();
  });
