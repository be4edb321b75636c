// The TypeScript SDK (clients/typescript, built by `make ts`), bundled from its compiled core: the
// app never speaks the wire protocol itself.
export * from "../../typescript/dist/src/index.js";
