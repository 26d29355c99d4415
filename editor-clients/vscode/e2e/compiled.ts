// A TypeScript file as its compiler sees it: type-checked, then run in Node to call a function,
// so that a test knows the saved file is the expected code, not only the server's text.
import { execFileSync } from 'node:child_process';
import ts from 'typescript';

const OPTIONS: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.CommonJS,
  lib: ['lib.es2022.d.ts'],
  types: [],
};

/** The compiler's errors for the file (syntax, types), one line each; [] when it compiles. */
export function typeErrors(file: string): string[] {
  const program = ts.createProgram([file], OPTIONS);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    if (diagnostic.file && diagnostic.start !== undefined) {
      const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
      return `${diagnostic.file.fileName}:${line + 1}:${character + 1}: TS${diagnostic.code} ${text}`;
    }
    return `TS${diagnostic.code} ${text}`;
  });
}

/** Compile `source` to CommonJS, run it in a new Node and return what `call` (an expression on `exports`) gives, as JSON. */
export function evaluate(source: string, call: string): unknown {
  const { outputText } = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } });
  const script = `${outputText}\nprocess.stdout.write(JSON.stringify(${call}));\n`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }));
}
