//! CEL validation rules (`x-kubernetes-validations`; CRD docs "Validation rules";
//! apiextensions-apiserver `pkg/apiserver/schema/cel`), compiled once per CRD version and
//! evaluated with `self` / `oldSelf` through the `kube-cel` crate, which carries the
//! Kubernetes CEL library (quantity, url, ip/cidr, regex, lists, sets, format, semver).
//!
//! kube-cel 0.8 parses rules but does not type-check them; [`super::cel_check`] adds the
//! check a CRD author meets, member selections against the schema (`self.nosuch` is
//! `undefined field 'nosuch'` and the CRD is invalid, as in kube-apiserver). Other type
//! errors (`self.name > 1` on a string) are not found until the rule is evaluated.
//!
//! Known differences from kube-apiserver, all from kube-cel 0.8: `oldSelf` of an
//! `optionalOldSelf` rule on create is `null`, not `optional.none()`; array items are correlated with their old value by index (kube-apiserver
//! correlates only `listType: map` items, by key); cost limits are not enforced.

use kube_cel::{CompiledSchema, ErrorKind, RootContext, Validator};
use serde_json::Value;

use super::{
    causes::{ErrorType, FieldError},
    model::{Additional, Node},
};

/// The compiled rules of one schema.
pub struct Rules {
    compiled: CompiledSchema,
    root: RootContext,
    any: bool,
}

impl std::fmt::Debug for Rules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rules").field("any", &self.any).finish()
    }
}

thread_local! {
    static VALIDATOR: Validator = Validator::new();
}

fn has_rules(schema: &Value) -> bool {
    match schema {
        Value::Object(m) => {
            m.get("x-kubernetes-validations")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty())
                || m.iter()
                    .filter(|(k, _)| {
                        k.as_str() != "default" && k.as_str() != "enum" && k.as_str() != "example"
                    })
                    .any(|(_, v)| has_rules(v))
        }
        Value::Array(a) => a.iter().any(has_rules),
        _ => false,
    }
}

impl Rules {
    /// Compiles every rule of `schema` (parsed as `node`). A rule (or messageExpression)
    /// that does not compile, or names a field the schema does not declare, is an error at
    /// `<prefix>...x-kubernetes-validations[i].rule`, which makes the CRD invalid as in
    /// kube-apiserver.
    pub fn compile(
        schema: &Value,
        node: &Node,
        prefix: &str,
        root: RootContext,
    ) -> Result<Rules, Vec<FieldError>> {
        let compiled = kube_cel::compile_schema(schema);
        let mut errs = Vec::new();
        collect_errors(&compiled, schema, Some(node), true, prefix, &mut errs);
        if errs.is_empty() {
            Ok(Rules {
                any: has_rules(schema),
                compiled,
                root,
            })
        } else {
            Err(errs)
        }
    }

    /// Whether the schema has any rule (kube-apiserver builds no CEL validator otherwise).
    pub fn has_rules(&self) -> bool {
        self.any
    }

    /// Evaluates the rules on `object` (already defaulted and pruned), with `old` for
    /// transition rules on update.
    pub fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<FieldError> {
        if !self.any {
            return Vec::new();
        }
        let result = VALIDATOR.with(|v| {
            v.validate_compiled_with_context(&self.compiled, object, old, Some(&self.root))
        });
        let Err(errors) = result else {
            return Vec::new();
        };
        errors
            .into_vec()
            .into_iter()
            .map(|e| {
                let field = e.field_path.trim_start_matches('.').to_owned();
                let ty = Value::String(type_at(object, &field).into());
                match (e.kind, e.reason.as_deref()) {
                    (ErrorKind::ValidationFailure, Some("FieldValueForbidden")) => {
                        FieldError::new(ErrorType::Forbidden, &field, None, e.message)
                    }
                    (ErrorKind::ValidationFailure, Some("FieldValueRequired")) => {
                        FieldError::required(&field, e.message)
                    }
                    (ErrorKind::ValidationFailure, Some("FieldValueDuplicate")) => {
                        FieldError::new(ErrorType::Duplicate, &field, Some(ty), e.message)
                    }
                    _ => FieldError::invalid(&field, &ty, e.message),
                }
            })
            .collect()
    }
}

/// Walks the compiled rules with their raw schema and (where the walk follows the
/// structural tree: properties, items, additionalProperties) the parsed node the rules
/// are type-checked against; `root` for the schema's root.
fn collect_errors(
    c: &CompiledSchema,
    raw: &Value,
    node: Option<&Node>,
    root: bool,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    // A node CEL has no type for cannot carry rules: no `type` (and not
    // int-or-string, which CEL sees as `dyn`), or an array of such items
    // (`SchemaDeclType` in `k8s.io/apiserver/pkg/cel/common/schemas.go` returns nil;
    // `compilation.go` refuses, and apiextensions' `validation.go` reports it as an
    // InternalError on the node's `x-kubernetes-validations`).
    if !c.validations.is_empty()
        && let Some(untyped) = untyped_for_cel(raw)
    {
        errs.push(FieldError::new(
            ErrorType::Internal,
            &format!("{path}.x-kubernetes-validations"),
            None,
            format!(
                "rule declared on schema that does not support validation rules type: '{}' x-kubernetes-preserve-unknown-fields: '{}'",
                untyped.ty,
                untyped.preserve
            ),
        ));
    } else {
        rule_errors(c, raw, node, root, path, errs);
    }
    collect_children(c, raw, node, path, errs);
}

/// What makes a node untyped for CEL, for the message.
struct Untyped {
    ty: String,
    preserve: bool,
}

/// `Some` when CEL has no type for the node `raw`.
fn untyped_for_cel(raw: &Value) -> Option<Untyped> {
    let flag = |v: &Value, key: &str| v.get(key).and_then(Value::as_bool) == Some(true);
    let untyped = |v: &Value| v.get("type").is_none() && !flag(v, "x-kubernetes-int-or-string");
    let ty = raw.get("type").and_then(Value::as_str).unwrap_or_default();
    let dead = untyped(raw) || (ty == "array" && raw.get("items").is_some_and(untyped));
    dead.then(|| Untyped {
        ty: ty.to_owned(),
        preserve: flag(raw, "x-kubernetes-preserve-unknown-fields"),
    })
}

/// The compile and type-check errors of the node's own rules.
fn rule_errors(
    c: &CompiledSchema,
    raw: &Value,
    node: Option<&Node>,
    root: bool,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    for (i, r) in c.validations.iter().enumerate() {
        let rule = raw
            .get("x-kubernetes-validations")
            .and_then(|v| v.get(i))
            .and_then(|v| v.get("rule"))
            .cloned()
            .unwrap_or(Value::Null);
        let field = format!("{path}.x-kubernetes-validations[{i}].rule");
        match r {
            Err(e) => errs.push(FieldError::invalid(
                &field,
                &rule,
                format!("compilation failed: {e}"),
            )),
            Ok(_) => {
                let issues = node.and_then(|n| {
                    rule.as_str()
                        .and_then(|text| super::cel_check::check(text, n, root))
                });
                if let Some(issues) = issues {
                    errs.push(FieldError::invalid(
                        &field,
                        &rule,
                        format!("compilation failed: {issues}"),
                    ));
                }
            }
        }
    }
}

/// [`collect_errors`] of the node's children.
fn collect_children(
    c: &CompiledSchema,
    raw: &Value,
    node: Option<&Node>,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    // kube-cel keeps properties in a HashMap: walk them in name order, so the same schema
    // gives the same errors in the same order.
    let mut properties: Vec<_> = c.properties.iter().collect();
    properties.sort_unstable_by(|a, b| a.0.cmp(b.0));
    for (k, child) in properties {
        if let Some(r) = raw.get("properties").and_then(|p| p.get(k)) {
            let n = node.and_then(|n| n.properties.get(k));
            collect_errors(child, r, n, false, &format!("{path}.properties[{k}]"), errs);
        }
    }
    if let (Some(child), Some(r)) = (&c.items, raw.get("items")) {
        let n = node.and_then(|n| n.items.as_deref());
        collect_errors(child, r, n, false, &format!("{path}.items"), errs);
    }
    if let (Some(child), Some(r)) = (&c.additional_properties, raw.get("additionalProperties")) {
        let n = node.and_then(|n| match &n.additional {
            Some(Additional::Schema(s)) => Some(&**s),
            _ => None,
        });
        collect_errors(
            child,
            r,
            n,
            false,
            &format!("{path}.additionalProperties"),
            errs,
        );
    }
    for (key, list) in [
        ("allOf", &c.all_of),
        ("oneOf", &c.one_of),
        ("anyOf", &c.any_of),
    ] {
        for (i, child) in list.iter().enumerate() {
            if let Some(r) = raw.get(key).and_then(|a| a.get(i)) {
                collect_errors(child, r, None, false, &format!("{path}.{key}[{i}]"), errs);
            }
        }
    }
}

/// The OpenAPI type name of the value at dotted `path` (`spec.l[0].x`), as kube-apiserver
/// puts the schema type in a failed rule's `Invalid value: "object"`.
fn type_at(root: &Value, path: &str) -> &'static str {
    let mut cur = Some(root);
    for seg in path.split('.').filter(|s| !s.is_empty()) {
        let (name, idx) = match seg.split_once('[') {
            Some((n, rest)) => (n, rest.trim_end_matches(']').parse::<usize>().ok()),
            None => (seg, None),
        };
        if !name.is_empty() {
            cur = cur.and_then(|v| v.get(name));
        }
        if let Some(i) = idx {
            cur = cur.and_then(|v| v.get(i));
        }
    }
    match cur {
        Some(Value::Object(_)) | None => "object",
        Some(Value::Array(_)) => "array",
        Some(Value::String(_)) => "string",
        Some(Value::Bool(_)) => "boolean",
        Some(Value::Number(n)) if n.is_f64() => "number",
        Some(Value::Number(_)) => "integer",
        Some(Value::Null) => "null",
    }
}
