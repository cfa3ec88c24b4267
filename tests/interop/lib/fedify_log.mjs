// Keeps Fedify's own log lines (it explains every refusal only there: verifyRequest and the
// lookups return null) so a failing check can print why. Nothing is printed otherwise.
import { configure, defaultTextFormatter } from "@logtape/logtape";

const recent = [];

export async function captureFedifyLogs() {
  await configure({
    sinks: {
      memory(record) {
        const line = defaultTextFormatter(record).trimEnd();
        if (line.includes("Using preloaded context")) return;
        recent.push(line.length > 600 ? `${line.slice(0, 597)}...` : line);
        if (recent.length > 12) recent.shift();
      },
    },
    loggers: [
      { category: "fedify", lowestLevel: "debug", sinks: ["memory"] },
      { category: ["logtape", "meta"], lowestLevel: "warning", sinks: [] },
    ],
  });
}

// The lines logged since the last call, then forgets them.
export function takeFedifyLogs() {
  const text = recent.join("\n");
  recent.length = 0;
  return text ? `fedify log:\n${text}` : "";
}

export function clearFedifyLogs() {
  recent.length = 0;
}

// The last "Failed to verify" reason Fedify logged, without the timestamp, or "".
export function fedifyLastRefusal() {
  for (let i = recent.length - 1; i >= 0; i--) {
    const m = /Failed to verify[^\n]*/.exec(recent[i]);
    if (m) return m[0].replace(/signature '[^']*'/, "signature").replace(/\s+Check if.*$/, "");
  }
  return "";
}
