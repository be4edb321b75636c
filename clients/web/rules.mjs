// The games' rules pages (docs/rules/<page>.md in English, <page>.nl.md, <page>.de.md) for the
// browser app: copied as they are into dist/rules/ and rendered to HTML beside them
// (dist/rules/<page>.<lang>.html), with dist/rules/index.json listing the languages of each page.
// The web edge serves dist/ at /, so /rules/connect-four.nl.html is the Dutch Connect Four page.
//
// The Markdown is the plain kind the pages keep to (headings, paragraphs, lists, tables, fenced
// code, block quotes; inline code, bold, italics, links), so a few lines render it and the app
// needs no Markdown library. Links between the pages (x.nl.md) point at the HTML (x.nl.html).
//
//   node rules.mjs [SOURCE_DIR] [OUT_DIR]     (default ../../docs/rules -> dist/rules)
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const LANGUAGES = ["en", "nl", "de"];

/** "connect-four.nl.md" -> { page: "connect-four", lang: "nl" }; English pages have no suffix. */
export function pageOf(file) {
  const match = /^(.+?)(?:\.(nl|de))?\.md$/.exec(file);
  return match ? { page: match[1], lang: match[2] ?? "en" } : undefined;
}

function escape(text) {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function href(target) {
  // A relative link to another rules page goes to its HTML rendering.
  return /^[\w.-]+\.md(#.*)?$/.test(target) ? target.replace(/\.md(#|$)/, ".html$1") : target;
}

export function inline(text) {
  const codes = [];
  let out = escape(text).replace(/`([^`]+)`/g, (_, code) => {
    codes.push(`<code>${code}</code>`);
    return `\u0000${codes.length - 1}\u0000`;
  });
  out = out
    .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_, label, target) => `<a href="${href(target)}">${label}</a>`)
    .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
    .replace(/(^|[^\w*])\*([^*\s][^*]*?)\*(?![\w*])/g, "$1<em>$2</em>");
  return out.replace(/\u0000(\d+)\u0000/g, (_, i) => codes[Number(i)]);
}

function slug(text) {
  return text.toLowerCase().replace(/`/g, "").replace(/[^\p{L}\p{N}]+/gu, "-").replace(/^-|-$/g, "");
}

function cells(row) {
  return row.trim().replace(/^\||\|$/g, "").split("|").map((cell) => cell.trim());
}

/** Markdown (the plain subset above) -> HTML. */
export function render(markdown) {
  const lines = markdown.replace(/\r\n/g, "\n").split("\n");
  const html = [];
  let i = 0;
  const blank = (line) => line === undefined || line.trim() === "";
  const item = /^(\s*)(-|\d+\.)\s+(.*)$/;
  while (i < lines.length) {
    const line = lines[i];
    if (blank(line)) {
      i++;
    } else if (line.startsWith("```")) {
      const code = [];
      for (i++; i < lines.length && !lines[i].startsWith("```"); i++) code.push(lines[i]);
      i++;
      html.push(`<pre><code>${escape(code.join("\n"))}</code></pre>`);
    } else if (/^#{1,6}\s/.test(line)) {
      const level = /^#+/.exec(line)[0].length;
      const text = line.slice(level).trim();
      html.push(`<h${level} id="${slug(text)}">${inline(text)}</h${level}>`);
      i++;
    } else if (line.trimStart().startsWith("|")) {
      const rows = [];
      for (; i < lines.length && lines[i].trimStart().startsWith("|"); i++) rows.push(lines[i]);
      const [head, , ...body] = rows;
      const headCells = cells(head);
      const thead = headCells.every((c) => c === "") ? "" : `<thead><tr>${headCells.map((c) => `<th>${inline(c)}</th>`).join("")}</tr></thead>`;
      const tbody = body.map((row) => `<tr>${cells(row).map((c) => `<td>${inline(c)}</td>`).join("")}</tr>`).join("");
      html.push(`<div class="table"><table>${thead}<tbody>${tbody}</tbody></table></div>`);
    } else if (line.startsWith(">")) {
      const quote = [];
      for (; i < lines.length && lines[i].startsWith(">"); i++) quote.push(lines[i].replace(/^>\s?/, ""));
      html.push(`<blockquote>${render(quote.join("\n"))}</blockquote>`);
    } else if (item.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const items = [];
      while (i < lines.length && !blank(lines[i])) {
        const start = item.exec(lines[i]);
        if (start) items.push(start[3]);
        else items[items.length - 1] += ` ${lines[i].trim()}`;
        i++;
      }
      const tag = ordered ? "ol" : "ul";
      html.push(`<${tag}>${items.map((text) => `<li>${inline(text)}</li>`).join("")}</${tag}>`);
    } else {
      const para = [];
      for (; i < lines.length && !blank(lines[i]) && !/^(#{1,6}\s|```|\||>)/.test(lines[i]) && !item.test(lines[i]); i++) para.push(lines[i].trim());
      html.push(`<p>${inline(para.join(" "))}</p>`);
    }
  }
  return html.join("\n");
}

const STYLE = `
body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: #1b1b1b; background: #fff; }
main { max-width: 46rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.6rem; margin-top: 0.5rem; } h2 { font-size: 1.3rem; margin-top: 2rem; } h3 { font-size: 1.1rem; }
a { color: #0b57d0; } a:focus-visible { outline: 3px solid #0b57d0; outline-offset: 2px; }
code { font: 0.9em ui-monospace, monospace; background: #f1f3f4; padding: 0 0.2em; border-radius: 3px; overflow-wrap: anywhere; }
pre { overflow-x: auto; background: #f1f3f4; padding: 0.75rem; border-radius: 4px; line-height: 1.3; }
pre code { background: none; padding: 0; overflow-wrap: normal; }
.table { overflow-x: auto; } table { border-collapse: collapse; margin: 1rem 0; }
th, td { border: 1px solid #c4c7c5; padding: 0.3rem 0.5rem; text-align: left; vertical-align: top; }
blockquote { margin: 1rem 0; padding-left: 1rem; border-left: 4px solid #c4c7c5; }
nav.back a, h1 + p a { display: inline-block; min-height: 44px; line-height: 44px; } /* touch targets */
`;

/** A whole HTML page for one rules page. */
export function page(markdown, lang) {
  const title = /^#\s+(.+)$/m.exec(markdown)?.[1] ?? "tafel";
  return `<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)} · tafel</title>
<link rel="icon" href="/favicon.svg">
<style>${STYLE}</style>
</head>
<body>
<main>
<nav class="back"><a href="/">tafel</a></nav>
${render(markdown)}
</main>
</body>
</html>
`;
}

/** Copies and renders every rules page of `source` into `out`; returns index.json's content. */
export async function buildRules(source, out) {
  await mkdir(out, { recursive: true });
  const index = {};
  for (const file of (await readdir(source)).sort()) {
    const found = pageOf(file);
    if (found === undefined) continue;
    const markdown = await readFile(join(source, file), "utf8");
    await writeFile(join(out, file), markdown);
    await writeFile(join(out, file.replace(/\.md$/, ".html")), page(markdown, found.lang));
    (index[found.page] ??= []).push(found.lang);
  }
  for (const langs of Object.values(index)) langs.sort((a, b) => LANGUAGES.indexOf(a) - LANGUAGES.indexOf(b));
  await writeFile(join(out, "index.json"), `${JSON.stringify(index, null, 2)}\n`);
  return index;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const here = fileURLToPath(new URL(".", import.meta.url));
  await buildRules(process.argv[2] ?? join(here, "../../docs/rules"), process.argv[3] ?? join(here, "dist/rules"));
}
