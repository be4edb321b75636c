// A translated sentence with elements inside it ("{{actor}} banned {{subject}}", each name a link):
// the words around the elements differ per language, and so does their order, so the sentence is
// read from the catalogue with markers in the placeholders and the elements put where they landed.
//   place(t("staff.audit.ban", { actor: slot("actor"), subject: slot("subject") }), { actor: a, subject: b })

const MARK = "\u0000";

/** The marker for a placeholder that `place` fills with an element. */
export function slot(name: string): string {
  return `${MARK}${name}${MARK}`;
}

/** The sentence as text and element pieces, in the sentence's order. */
export function place(sentence: string, nodes: Record<string, Node | string>): (Node | string)[] {
  return sentence
    .split(new RegExp(`${MARK}(\\w+)${MARK}`))
    .map((piece, i) => (i % 2 === 1 ? (nodes[piece] ?? "") : piece))
    .filter((piece) => piece !== "");
}
