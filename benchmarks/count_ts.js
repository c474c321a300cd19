// Count classes and functions in TypeScript/JavaScript files with the TypeScript
// compiler's AST, using the same definition of "class" and "function" as NervaPack:
//   class    = class, interface, enum, type alias declarations (and named class expressions)
//   function = function declarations and overload signatures, methods, constructors,
//              method signatures, get/set accessors, and arrow/function expressions assigned to a name
//              (variable, object property, class field, `obj.prop = ...`).
const ts = require("typescript");
const fs = require("fs");
const path = require("path");
const [root, ...files] = process.argv.slice(2);
let classes = 0, functions = 0;
const isFn = (n) => n && (ts.isArrowFunction(n) || ts.isFunctionExpression(n));
for (const rel of files) {
  const full = path.join(root, rel);
  const kind = rel.endsWith(".tsx") ? ts.ScriptKind.TSX : rel.endsWith(".jsx") ? ts.ScriptKind.JSX
    : /\.(m|c)?js$/.test(rel) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(full, fs.readFileSync(full, "utf8"), ts.ScriptTarget.Latest, true, kind);
  const visit = (n) => {
    if (ts.isClassDeclaration(n) && n.name || ts.isClassExpression(n) && n.name || ts.isInterfaceDeclaration(n)
        || ts.isEnumDeclaration(n) || ts.isTypeAliasDeclaration(n)) classes++;
    else if (ts.isFunctionDeclaration(n) && n.name || ts.isMethodDeclaration(n) || ts.isConstructorDeclaration(n)
        || ts.isMethodSignature(n) || ts.isGetAccessorDeclaration(n) || ts.isSetAccessorDeclaration(n)) functions++;
    else if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && isFn(n.initializer)) functions++;
    else if (ts.isPropertyAssignment(n) && ts.isIdentifier(n.name) && isFn(n.initializer)) functions++;
    else if (ts.isPropertyDeclaration(n) && ts.isIdentifier(n.name) && isFn(n.initializer)) functions++;
    else if (ts.isBinaryExpression(n) && n.operatorToken.kind === ts.SyntaxKind.EqualsToken
        && ts.isPropertyAccessExpression(n.left) && isFn(n.right)) functions++;
    ts.forEachChild(n, visit);
  };
  visit(sf);
}
console.log(JSON.stringify({ class: classes, function: functions }));
