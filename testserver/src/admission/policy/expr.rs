//! CEL for admission policies: compiling an expression the way the policy plugins need it
//! on top of the `cel` interpreter (re-exported by `kube-cel`, with the Kubernetes library
//! registered), the JSON <-> CEL value conversions, and the evaluation context
//! (`object`, `oldObject`, `request`, `params`, `namespaceObject`, `variables`).
//!
//! Two rewrites are applied to the parsed expression, because the interpreter has no
//! message types (`cel` 0.13 panics on a struct literal):
//!
//! * a struct literal (`Object{spec: Object.spec{replicas: 1}}`, `JSONPatch{op: "add"}`)
//!   becomes a map literal with string keys, so that it evaluates to the JSON object the
//!   mutating plugin applies (kube-apiserver builds an `ObjectVal` whose type names are
//!   checked against the field path; here the type names are dropped);
//! * nothing else: `variables.x` is a field of the `variables` map, filled in declaration
//!   order before the expressions run (kube-apiserver evaluates variables lazily; an
//!   unused variable that fails is harmless in both: it is left out of the map, and a use
//!   reports the variable's own error).
//!
//! Known differences from kube-apiserver (`k8s.io/apiserver/pkg/admission/plugin/cel`):
//! expressions are parsed, not type-checked (a misspelt field fails at evaluation, and
//! is then handled per `failurePolicy`); there is no cost budget; `authorizer` is not
//! bound (an expression naming it fails to evaluate); date-time strings stay strings
//! (no schema to say they are timestamps).

use std::{
    collections::HashMap,
    panic::{AssertUnwindSafe, catch_unwind},
    sync::Arc,
};

use kube_cel::{
    KubeCelExt,
    cel::{
        self, Context, ExecutionError, IdedExpr, Program,
        common::{
            ast::{EntryExpr, Expr, IdedEntryExpr, LiteralValue, MapEntryExpr, MapExpr},
            types::CelString,
        },
        objects::{Key, Map, OptionalValue},
    },
};
use serde_json::Value;

/// A CEL failure: the expression did not parse, or failed at evaluation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CelError {
    /// The expression does not parse (kube-apiserver: a compilation error).
    #[error("compilation failed: {0}")]
    Compile(String),
    /// The expression failed at run time.
    #[error("{0}")]
    Eval(String),
}

/// A parsed and rewritten expression, ready to run.
#[derive(Debug)]
pub(crate) struct Compiled {
    /// The source text, for messages.
    pub(crate) source: String,
    expr: IdedExpr,
}

/// Parses `source` and rewrites its struct literals into map literals.
pub(crate) fn compile(source: &str) -> Result<Compiled, CelError> {
    // The parser of `cel` 0.13 is generated code; a panic on odd input must not take the
    // server down.
    let parsed = catch_unwind(|| Program::compile(source))
        .map_err(|_| CelError::Compile("the CEL parser failed on this expression".into()))?
        .map_err(|e| CelError::Compile(e.to_string().trim().to_owned()))?;
    let mut expr = parsed.expression().clone();
    rewrite(&mut expr);
    Ok(Compiled {
        source: source.to_owned(),
        expr,
    })
}

/// Turns every struct literal into a map literal with string keys (see the module docs).
fn rewrite(e: &mut IdedExpr) {
    match &mut e.expr {
        Expr::Struct(s) => {
            let mut entries = std::mem::take(&mut s.entries);
            for entry in &mut entries {
                if let EntryExpr::StructField(f) = &mut entry.expr {
                    let value = std::mem::take(&mut f.value);
                    entry.expr = EntryExpr::MapEntry(MapEntryExpr {
                        key: IdedExpr {
                            id: entry.id,
                            expr: Expr::Literal(LiteralValue::String(CelString::from(
                                f.field.as_str(),
                            ))),
                        },
                        value,
                        optional: f.optional,
                    });
                }
            }
            e.expr = Expr::Map(MapExpr { entries });
            rewrite(e);
        }
        Expr::Map(m) => {
            for IdedEntryExpr { expr, .. } in &mut m.entries {
                match expr {
                    EntryExpr::MapEntry(me) => {
                        rewrite(&mut me.key);
                        rewrite(&mut me.value);
                    }
                    EntryExpr::StructField(f) => rewrite(&mut f.value),
                }
            }
        }
        Expr::Call(c) => {
            if let Some(t) = c.target.as_deref_mut() {
                rewrite(t);
            }
            c.args.iter_mut().for_each(rewrite);
        }
        Expr::Comprehension(c) => {
            rewrite(&mut c.iter_range);
            rewrite(&mut c.accu_init);
            rewrite(&mut c.loop_cond);
            rewrite(&mut c.loop_step);
            rewrite(&mut c.result);
        }
        Expr::List(l) => l.elements.iter_mut().for_each(rewrite),
        Expr::Select(s) => rewrite(&mut s.operand),
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
    }
}

thread_local! {
    /// The root context with the Kubernetes CEL library; each evaluation binds its
    /// variables in a child scope, so the functions are registered once per thread.
    static ROOT: Context<'static> = Context::default().with_all();
}

/// The variables of one evaluation, converted to CEL once: `object`, `oldObject`,
/// `request` (an `admission.k8s.io/v1` AdmissionRequest as JSON), `params` and
/// `namespaceObject` (`null` when absent, as kube-apiserver binds them), and the
/// `variables` computed so far.
pub(crate) struct Bound {
    vars: Vec<(&'static str, cel::Value)>,
    variables: HashMap<Key, cel::Value>,
    variable_errors: Vec<(String, String)>,
}

impl Bound {
    /// Binds the JSON variables.
    pub(crate) fn new(
        object: Option<&Value>,
        old_object: Option<&Value>,
        request: &Value,
        params: Option<&Value>,
        namespace_object: Option<&Value>,
    ) -> Bound {
        let or_null = |v: Option<&Value>| v.map(to_cel).unwrap_or(cel::Value::Null);
        Bound {
            vars: vec![
                ("object", or_null(object)),
                ("oldObject", or_null(old_object)),
                ("request", to_cel(request)),
                ("params", or_null(params)),
                ("namespaceObject", or_null(namespace_object)),
            ],
            variables: HashMap::new(),
            variable_errors: Vec::new(),
        }
    }

    /// Replaces `object` (a mutation's result, seen by the next mutation).
    pub(crate) fn set_object(&mut self, object: &Value) {
        if let Some(slot) = self.vars.iter_mut().find(|(n, _)| *n == "object") {
            slot.1 = to_cel(object);
        }
    }

    /// Adds `variables.<name>`: its value, or the error a use of it reports.
    pub(crate) fn add_variable(&mut self, name: &str, value: Result<cel::Value, CelError>) {
        match value {
            Ok(v) => {
                self.variables
                    .insert(Key::String(Arc::new(name.to_owned())), v);
            }
            Err(e) => self.variable_errors.push((name.to_owned(), e.to_string())),
        }
    }

    /// Evaluates `compiled` (a panic inside the interpreter is an evaluation error).
    pub(crate) fn eval(&self, compiled: &Compiled) -> Result<cel::Value, CelError> {
        let variables = cel::Value::Map(Map {
            map: Arc::new(self.variables.clone()),
        });
        let result = ROOT.with(|root| {
            let mut ctx = root.new_inner_scope();
            for (name, value) in &self.vars {
                ctx.add_variable_from_value(*name, value.clone());
            }
            ctx.add_variable_from_value("variables", variables);
            catch_unwind(AssertUnwindSafe(|| {
                cel::Value::resolve(&compiled.expr, &ctx)
            }))
        });
        match result {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(self.explain(&compiled.source, &e)),
            Err(_) => Err(CelError::Eval(format!(
                "expression '{}' is not supported by the CEL interpreter",
                compiled.source
            ))),
        }
    }

    /// The message of a failed evaluation: a use of a variable that failed reports that
    /// variable's error.
    fn explain(&self, source: &str, e: &ExecutionError) -> CelError {
        if let ExecutionError::NoSuchKey(key) = e
            && let Some((name, err)) = self.variable_errors.iter().find(|(n, _)| n == &**key)
        {
            return CelError::Eval(format!(
                "composited variable \"{name}\" fails to evaluate: {err}"
            ));
        }
        CelError::Eval(format!("expression '{source}' resulted in error: {e}"))
    }
}

/// JSON to CEL: integers are `int` (`uint` only above `i64::MAX`), as kube-apiserver's
/// unstructured conversion makes them.
pub(crate) fn to_cel(v: &Value) -> cel::Value {
    match v {
        Value::Null => cel::Value::Null,
        Value::Bool(b) => cel::Value::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => cel::Value::Int(i),
            (None, Some(u)) => cel::Value::UInt(u),
            _ => cel::Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => cel::Value::String(Arc::new(s.clone())),
        Value::Array(a) => cel::Value::List(Arc::new(a.iter().map(to_cel).collect())),
        Value::Object(m) => cel::Value::Map(Map {
            map: Arc::new(
                m.iter()
                    .map(|(k, v)| (Key::String(Arc::new(k.clone())), to_cel(v)))
                    .collect(),
            ),
        }),
    }
}

/// CEL to JSON (for mutations and messages): bytes become base64, timestamps RFC 3339,
/// durations Go's `1h2m3s` form as seconds (`"3s"`); an optional is its value or `null`.
pub(crate) fn to_json(v: &cel::Value) -> Result<Value, CelError> {
    Ok(match v {
        cel::Value::Null => Value::Null,
        cel::Value::Bool(b) => Value::Bool(*b),
        cel::Value::Int(i) => Value::from(*i),
        cel::Value::UInt(u) => Value::from(*u),
        cel::Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(Value::Number)
            .ok_or_else(|| CelError::Eval(format!("{f} cannot be represented in JSON")))?,
        cel::Value::String(s) => Value::String((**s).clone()),
        cel::Value::Bytes(b) => {
            use base64::Engine as _;
            Value::String(base64::engine::general_purpose::STANDARD.encode(&**b))
        }
        cel::Value::Timestamp(t) => Value::String(t.to_rfc3339()),
        cel::Value::Duration(d) => Value::String(format!("{}s", d.num_seconds())),
        cel::Value::List(l) => Value::Array(l.iter().map(to_json).collect::<Result<_, _>>()?),
        cel::Value::Map(m) => {
            let mut out = serde_json::Map::new();
            for (k, v) in m.map.iter() {
                let key = match k {
                    Key::String(s) => (**s).clone(),
                    Key::Int(i) => i.to_string(),
                    Key::Uint(u) => u.to_string(),
                    Key::Bool(b) => b.to_string(),
                };
                out.insert(key, to_json(v)?);
            }
            Value::Object(out)
        }
        cel::Value::Opaque(o) => match o.downcast_ref::<OptionalValue>() {
            Some(opt) => match opt.value() {
                Some(inner) => to_json(inner)?,
                None => Value::Null,
            },
            None => {
                return Err(CelError::Eval(format!(
                    "a value of type {} cannot be converted to JSON",
                    o.runtime_type_name()
                )));
            }
        },
        cel::Value::Function(name, _) => {
            return Err(CelError::Eval(format!(
                "function {name} cannot be converted to JSON"
            )));
        }
    })
}

/// The CEL type name of a value, for messages.
pub(crate) fn type_name(v: &cel::Value) -> &'static str {
    match v {
        cel::Value::Null => "null_type",
        cel::Value::Bool(_) => "bool",
        cel::Value::Int(_) => "int",
        cel::Value::UInt(_) => "uint",
        cel::Value::Float(_) => "double",
        cel::Value::String(_) => "string",
        cel::Value::Bytes(_) => "bytes",
        cel::Value::List(_) => "list",
        cel::Value::Map(_) => "map",
        cel::Value::Timestamp(_) => "google.protobuf.Timestamp",
        cel::Value::Duration(_) => "google.protobuf.Duration",
        cel::Value::Function(..) => "function",
        cel::Value::Opaque(_) => "opaque",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn run(source: &str, object: Value) -> Result<Value, CelError> {
        let compiled = compile(source)?;
        let bound = Bound::new(Some(&object), None, &Value::Null, None, None);
        to_json(&bound.eval(&compiled)?)
    }

    #[test]
    fn struct_literals_evaluate_to_objects() {
        let out = run(
            "Object{metadata: Object.metadata{labels: {'a': object.metadata.name}}}",
            json!({"metadata": {"name": "x"}}),
        );
        assert_eq!(out, Ok(json!({"metadata": {"labels": {"a": "x"}}})));
        let patch = run(
            "[JSONPatch{op: 'add', path: '/metadata/annotations', value: {'k': 'v'}}]",
            json!({}),
        );
        assert_eq!(
            patch,
            Ok(json!([{"op": "add", "path": "/metadata/annotations", "value": {"k": "v"}}]))
        );
    }

    #[test]
    fn integers_are_ints_and_errors_are_reported() {
        assert_eq!(
            run("object.spec.replicas > 2", json!({"spec": {"replicas": 3}})),
            Ok(json!(true))
        );
        assert!(matches!(
            run("object.(", json!({})),
            Err(CelError::Compile(_))
        ));
        let err = run("object.spec.nosuch > 1", json!({"spec": {}}));
        assert!(matches!(err, Err(CelError::Eval(m)) if m.contains("nosuch")));
    }
}
