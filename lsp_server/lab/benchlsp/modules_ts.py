'''TypeScript modules of our own for `prewrite bench-lsp`: the brace language's sessions.

Every exported function opens its body with a `//` comment saying what it does: the spec. A
session takes one function, keeps its header and the `}` the editor closed, drops its comment
and body, and has the typist write the comment back; the other functions stay as neighbours.
'''

from __future__ import annotations

import re

ORDERS = """import { readFileSync } from "node:fs";

export interface Order {
  id: string;
  customer: string;
  placedAt: Date;
  lines: { sku: string; quantity: number; unitPrice: number }[];
  status: "open" | "shipped" | "cancelled";
}

export function orderTotal(order: Order): number {
  // Return the sum of quantity times unit price over the order's lines.
  // A cancelled order totals zero.
  if (order.status === "cancelled") {
    return 0;
  }
  return order.lines.reduce((sum, line) => sum + line.quantity * line.unitPrice, 0);
}

export function ordersByCustomer(orders: Order[]): Map<string, Order[]> {
  // Group the orders by customer. Each customer's orders keep their order in the input.
  const groups = new Map<string, Order[]>();
  for (const order of orders) {
    const group = groups.get(order.customer) ?? [];
    group.push(order);
    groups.set(order.customer, group);
  }
  return groups;
}

export function latestOrder(orders: Order[]): Order | undefined {
  // Return the order placed last, or undefined when there are none.
  // Cancelled orders are skipped.
  let latest: Order | undefined;
  for (const order of orders) {
    if (order.status === "cancelled") {
      continue;
    }
    if (latest === undefined || order.placedAt > latest.placedAt) {
      latest = order;
    }
  }
  return latest;
}

export function parseOrders(path: string): Order[] {
  // Read a JSON array of orders from the file at path. Turn each placedAt string into a Date.
  // Throw an Error naming the path when the file does not hold an array.
  const data: unknown = JSON.parse(readFileSync(path, "utf8"));
  if (!Array.isArray(data)) {
    throw new Error(`${path} does not hold an array of orders`);
  }
  return data.map((order) => ({ ...order, placedAt: new Date(order.placedAt) }));
}

export function topSkus(orders: Order[], count: number): string[] {
  // Return the count skus sold in the largest quantities, the largest first.
  // Only shipped orders count. Ties keep the sku that appeared first.
  const sold = new Map<string, number>();
  for (const order of orders) {
    if (order.status !== "shipped") {
      continue;
    }
    for (const line of order.lines) {
      sold.set(line.sku, (sold.get(line.sku) ?? 0) + line.quantity);
    }
  }
  return [...sold.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([sku]) => sku);
}

export function dailySummary(path: string): string {
  const orders = parseOrders(path);
  const total = orders.reduce((sum, order) => sum + orderTotal(order), 0);
  const best = topSkus(orders, 3).join(", ");
  return `${orders.length} orders, ${total.toFixed(2)} in total, best: ${best}`;
}
"""

TEXT = """export interface Span {
  start: number;
  end: number;
}

export function slugify(title: string): string {
  // Turn a title into a URL slug: lower case, runs of anything but letters and digits
  // become one hyphen, no hyphen at either end.
  return title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

export function wrapText(text: string, width: number): string[] {
  // Break the text into lines of at most width characters, breaking only between words.
  // A word longer than width gets a line of its own.
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\\s+/).filter((w) => w.length > 0)) {
    if (line.length === 0) {
      line = word;
    } else if (line.length + 1 + word.length <= width) {
      line += " " + word;
    } else {
      lines.push(line);
      line = word;
    }
  }
  if (line.length > 0) {
    lines.push(line);
  }
  return lines;
}

export function findAll(text: string, needle: string): Span[] {
  // Return the spans of every occurrence of needle in text, overlapping ones included.
  // An empty needle has no occurrences.
  const spans: Span[] = [];
  if (needle.length === 0) {
    return spans;
  }
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + 1)) {
    spans.push({ start: i, end: i + needle.length });
  }
  return spans;
}

export function truncate(text: string, maxLength: number): string {
  // Cut the text to at most maxLength characters, ending with an ellipsis when it was cut.
  // The cut falls at the last space before the limit when there is one.
  if (text.length <= maxLength) {
    return text;
  }
  const cut = text.slice(0, maxLength - 1);
  const space = cut.lastIndexOf(" ");
  return (space > 0 ? cut.slice(0, space) : cut) + "…";
}

export function wordFrequencies(text: string): Map<string, number> {
  // Count how often each word occurs, ignoring case. Words are runs of letters and apostrophes.
  const counts = new Map<string, number>();
  for (const word of text.toLowerCase().match(/[a-z']+/g) ?? []) {
    counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  return counts;
}

export function headline(title: string, body: string): string {
  const words = [...wordFrequencies(body).entries()].sort((a, b) => b[1] - a[1]);
  return `${truncate(title, 60)} (${slugify(title)}): ${words[0]?.[0] ?? "empty"}`;
}
"""

MODULES_TS = {"own-ts/orders": ORDERS, "own-ts/text": TEXT}

_HEADER = re.compile(r"^export function (\w+)\(.*\{\n", re.MULTILINE)
_COMMENT = "// "


def brace_parts(source: str) -> list[tuple[str, str, str, str]]:
    """(function name, above, comment text, below) for each function whose body opens with a
    `//` comment: above ends with the indented first body line, below with the closing `}`."""
    parts = []
    for header in _HEADER.finditer(source):
        body_start = header.end()
        body_end = source.index("\n}\n", body_start)
        lines = source[body_start:body_end].split("\n")
        indent = lines[0][: len(lines[0]) - len(lines[0].lstrip())]
        comment = []
        for line in lines:
            if not line.startswith(indent + _COMMENT):
                break
            comment.append(line[len(indent) + len(_COMMENT) :])
        if comment:
            above = source[:body_start] + indent
            below = source[body_end:]
            parts.append((header.group(1), above, "\n".join(comment), below))
    return parts
