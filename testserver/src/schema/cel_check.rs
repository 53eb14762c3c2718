//! Type-checking of CEL rules against their schema, the part of cel-go's checker a CRD
//! author meets: a member selection (`self.x`, `has(self.x)`, through `oldSelf`, list
//! items and map values, and the variables of `all` / `exists` / `exists_one` / `map` /
//! `filter`) naming a field the schema does not declare is `undefined field 'x'`, which
//! makes the CRD invalid (apiextensions-apiserver `pkg/apiserver/schema/cel/compilation.go`:
//! `compilation failed: ` + the checker's issues; `pkg/apis/apiextensions/validation/
//! validation.go` reports it on the rule as `Invalid value`).
//!
//! The types follow kube-apiserver's schema-to-CEL mapping (`model.SchemaDeclType`): an
//! object with `properties` is a struct of those fields; with `additionalProperties` a map
//! (any key selects a value); with `x-kubernetes-preserve-unknown-fields` or
//! `additionalProperties: true`, or without a type, anything goes (`dyn`); a resource root
//! and an `x-kubernetes-embedded-resource` object also have `apiVersion`, `kind` and
//! `metadata`. Only selections are checked: anything whose type this checker does not
//! follow (function results, literals, accumulators) is `dyn`, so a valid rule is never
//! refused.

use kube_cel::cel::{
    Program,
    common::ast::{Expr, IdedExpr, operators},
};

use super::model::{Additional, Node};

/// What the checker knows of an expression's type.
#[derive(Clone, Copy)]
enum Ty<'a> {
    /// A value described by a schema node; `root` for a resource's root or an embedded
    /// resource (which has `apiVersion`, `kind` and `metadata` besides its properties).
    Schema { node: &'a Node, root: bool },
    /// Unknown or unchecked.
    Dyn,
}

/// Checks `rule` (already known to parse) written on `node`; `root` when `node` is the
/// schema's root. Returns cel-go's issues text (`ERROR: <input>:1:5: undefined field
/// 'nosuch'` with the source line and a caret under the column), or `None` when it
/// type-checks.
pub fn check(rule: &str, node: &Node, root: bool) -> Option<String> {
    let program = Program::compile(rule).ok()?;
    let mut checker = Checker {
        source: rule,
        scopes: Vec::new(),
        issues: Vec::new(),
        cursor: 0,
    };
    let this = Ty::Schema {
        node,
        root: root || node.embedded_resource,
    };
    checker.expr(program.expression(), this, 0);
    if checker.issues.is_empty() {
        None
    } else {
        Some(checker.issues.join("\n"))
    }
}

struct Checker<'s, 'n> {
    source: &'s str,
    /// Variables bound by comprehensions, innermost last.
    scopes: Vec<(String, Ty<'n>)>,
    issues: Vec<String>,
    /// Where the next undefined field is looked for in the source (selections are visited
    /// left to right, as they are written).
    cursor: usize,
}

impl<'n> Checker<'_, 'n> {
    fn expr(&mut self, e: &IdedExpr, this: Ty<'n>, depth: usize) -> Ty<'n> {
        if depth > 128 {
            return Ty::Dyn;
        }
        match &e.expr {
            Expr::Ident(name) => self.ident(name, this),
            Expr::Select(sel) => {
                let operand = self.expr(&sel.operand, this, depth + 1);
                self.select(operand, &sel.field)
            }
            Expr::Call(call) => {
                let target = call
                    .target
                    .as_deref()
                    .map(|t| self.expr(t, this, depth + 1));
                let args: Vec<Ty<'n>> = call
                    .args
                    .iter()
                    .map(|a| self.expr(a, this, depth + 1))
                    .collect();
                match (call.func_name.as_str(), args.as_slice()) {
                    (operators::INDEX, [container, _]) => element(*container),
                    _ => {
                        let _ = target;
                        Ty::Dyn
                    }
                }
            }
            Expr::Comprehension(c) => {
                let range = self.expr(&c.iter_range, this, depth + 1);
                let item = match c.iter_var2 {
                    // Two variables: index or key, then the value.
                    Some(_) => Ty::Dyn,
                    None => iterated(range),
                };
                let mark = self.scopes.len();
                self.scopes.push((c.iter_var.clone(), item));
                if let Some(v2) = &c.iter_var2 {
                    self.scopes.push((v2.clone(), element(range)));
                }
                self.expr(&c.accu_init, this, depth + 1);
                self.scopes.push((c.accu_var.clone(), Ty::Dyn));
                self.expr(&c.loop_cond, this, depth + 1);
                self.expr(&c.loop_step, this, depth + 1);
                self.expr(&c.result, this, depth + 1);
                self.scopes.truncate(mark);
                Ty::Dyn
            }
            Expr::List(l) => {
                for el in &l.elements {
                    self.expr(el, this, depth + 1);
                }
                Ty::Dyn
            }
            Expr::Map(m) => {
                for entry in &m.entries {
                    if let kube_cel::cel::common::ast::EntryExpr::MapEntry(me) = &entry.expr {
                        self.expr(&me.key, this, depth + 1);
                        self.expr(&me.value, this, depth + 1);
                    }
                }
                Ty::Dyn
            }
            Expr::Struct(s) => {
                for entry in &s.entries {
                    if let kube_cel::cel::common::ast::EntryExpr::StructField(f) = &entry.expr {
                        self.expr(&f.value, this, depth + 1);
                    }
                }
                Ty::Dyn
            }
            Expr::Literal(_) | Expr::Unspecified => Ty::Dyn,
        }
    }

    fn ident(&self, name: &str, this: Ty<'n>) -> Ty<'n> {
        if let Some((_, ty)) = self.scopes.iter().rev().find(|(n, _)| n == name) {
            return *ty;
        }
        match name {
            "self" | "oldSelf" => this,
            _ => Ty::Dyn,
        }
    }

    fn select(&mut self, operand: Ty<'n>, field: &str) -> Ty<'n> {
        let Ty::Schema { node, root } = operand else {
            return Ty::Dyn;
        };
        if root && matches!(field, "apiVersion" | "kind" | "metadata") {
            return Ty::Dyn;
        }
        if let Some(p) = node.properties.get(field) {
            return schema(p);
        }
        if node.int_or_string || node.preserve_unknown_fields {
            return Ty::Dyn;
        }
        match &node.additional {
            Some(Additional::Schema(s)) => return schema(s),
            Some(Additional::Bool(true)) => return Ty::Dyn,
            _ => {}
        }
        match node.ty.as_deref() {
            Some("object") => {
                self.undefined(field);
                Ty::Dyn
            }
            _ => Ty::Dyn,
        }
    }

    /// Records cel-go's `undefined field` issue, located at the `.` of the selection.
    fn undefined(&mut self, field: &str) {
        let offset = find_selection(self.source, field, self.cursor)
            .or_else(|| find_selection(self.source, field, 0));
        if let Some(o) = offset {
            self.cursor = o + 1;
        }
        self.issues.push(issue(
            self.source,
            offset.unwrap_or(0),
            &format!("undefined field '{field}'"),
        ));
    }
}

fn schema(node: &Node) -> Ty<'_> {
    Ty::Schema {
        node,
        root: node.embedded_resource,
    }
}

/// The type of `container[i]`: an array's items or a map's values.
fn element(container: Ty<'_>) -> Ty<'_> {
    match container {
        Ty::Schema { node, .. } => {
            if let Some(items) = node.items.as_deref() {
                return schema(items);
            }
            match &node.additional {
                Some(Additional::Schema(s)) if node.properties.is_empty() => schema(s),
                _ => Ty::Dyn,
            }
        }
        Ty::Dyn => Ty::Dyn,
    }
}

/// The type of a comprehension's variable over `range`: a list's items; a map's keys
/// (strings: nothing to check).
fn iterated(range: Ty<'_>) -> Ty<'_> {
    match range {
        Ty::Schema { node, .. } => node.items.as_deref().map_or(Ty::Dyn, schema),
        Ty::Dyn => Ty::Dyn,
    }
}

/// The byte offset of the `.` of a selection of `field` (`.field` not followed by an
/// identifier character) at or after `from`.
fn find_selection(source: &str, field: &str, from: usize) -> Option<usize> {
    let needle = format!(".{field}");
    let mut start = from.min(source.len());
    while let Some(i) = source.get(start..).and_then(|s| s.find(&needle)) {
        let at = start + i;
        let end = at + needle.len();
        let next = source[end..].chars().next();
        if !next.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            return Some(at);
        }
        start = at + 1;
    }
    None
}

/// One issue as cel-go prints it (`common.Errors.ToDisplayString`): `ERROR: <input>:L:C:
/// message`, the source line, and a caret under the column.
fn issue(source: &str, offset: usize, message: &str) -> String {
    let before = source.get(..offset).unwrap_or(source);
    let line_no = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = before[line_start..].chars().count() + 1;
    let line = source[line_start..].lines().next().unwrap_or_default();
    let indicator: String = ".".repeat(col - 1);
    format!("ERROR: <input>:{line_no}:{col}: {message}\n | {line}\n | {indicator}^")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn node(schema: serde_json::Value) -> Node {
        Node::parse(&schema, "").expect("schema parses")
    }

    /// cel-go's checker: `undefined field 'nosuch'` at the `.` (1-based column), with the
    /// source line and a caret (compilation.go wraps it in `compilation failed: `).
    #[test]
    fn undefined_field_with_location() {
        let n = node(json!({"type": "object", "properties": {"a": {"type": "integer"}}}));
        assert_eq!(
            check("self.nosuch > 0", &n, false).as_deref(),
            Some("ERROR: <input>:1:5: undefined field 'nosuch'\n | self.nosuch > 0\n | ....^")
        );
        assert_eq!(check("self.a > 0 && has(self.a)", &n, false), None);
        assert!(
            check("has(self.b)", &n, false)
                .is_some_and(|e| e.starts_with("ERROR: <input>:1:9: undefined field 'b'"))
        );
        assert!(check("oldSelf.b == self.a", &n, false).is_some());
    }

    /// Lists, maps, macros' variables, preserve-unknown-fields, int-or-string, embedded
    /// resources and the root's apiVersion/kind/metadata.
    #[test]
    fn follows_items_maps_and_macros() {
        let n = node(json!({"type": "object", "properties": {
            "l": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "string"}}}},
            "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {"y": {"type": "integer"}}}},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "ios": {"x-kubernetes-int-or-string": true},
            "tpl": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {"spec": {"type": "object"}}}}}));
        for ok in [
            "self.l.all(i, i.x != '')",
            "self.l.exists(i, i.x == 'a') || self.l.map(i, i.x).size() > 0",
            "self.l[0].x == 'a'",
            "self.m.anything.y > 0 && self.m.all(k, k != '')",
            "self.m['k'].y > 0",
            "self.free.whatever.deep == 1",
            "self.tpl.metadata.name != '' && self.tpl.kind == 'Pod'",
            "self.metadata.name != '' && self.apiVersion != ''",
            "[1, 2].all(x, x > 0)",
        ] {
            assert_eq!(check(ok, &n, true), None, "{ok}");
        }
        for (bad, field) in [
            ("self.l.all(i, i.z != '')", "z"),
            ("self.l.filter(i, has(i.q)).size() == 0", "q"),
            ("self.m.a.nope > 0", "nope"),
            ("self.tpl.spec.x == 1", "x"),
            ("self.metadata.name != '' && self.nope", "nope"),
        ] {
            let e = check(bad, &n, true).unwrap_or_default();
            assert!(
                e.contains(&format!("undefined field '{field}'")),
                "{bad}: {e}"
            );
        }
    }
}
