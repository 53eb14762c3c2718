//! Schema enforcement as kube-apiserver does it for custom resources (and, given an
//! OpenAPI schema, for any object): the structural-schema check that admits a CRD, pruning
//! of unknown fields, defaulting, OpenAPI v3 value validation, list/map types, CEL rules,
//! server-side field validation (unknown and duplicate fields; Strict/Warn/Ignore), and
//! the 422 `Invalid` errors with kube-apiserver's causes and messages.
//!
//! A leaf module: it knows JSON values and schemas, not the engine. The engine's
//! per-resource strategies call [`CrdSchema`]: compile it when a CRD is written (errors
//! make the CRD invalid), then on each write [`CrdSchema::admit`], and on reads
//! [`CrdSchema::read_back`].
//!
//! | file | concept | kube-apiserver source |
//! |---|---|---|
//! | `model.rs` | the parsed schema tree | apiextensions-apiserver `pkg/apiserver/schema/types.go` |
//! | `structural.rs` | structural check of a CRD schema | `pkg/apiserver/schema/validation.go` |
//! | `prune.rs` | unknown-field pruning | `pkg/apiserver/schema/pruning` |
//! | `defaults.rs` | defaulting, nulls | `pkg/apiserver/schema/defaulting` |
//! | `validate.rs` | OpenAPI value validation | kube-openapi `pkg/validation/validate`, `pkg/apiserver/validation` |
//! | `lists.rs` | list-type set/map | `pkg/apiserver/schema/listtype` |
//! | `cel.rs` | `x-kubernetes-validations` | `pkg/apiserver/schema/cel` (through `kube-cel`) |
//! | `cel_check.rs` | rules type-checked against the schema (`undefined field`) | `pkg/apiserver/schema/cel/compilation.go`, cel-go's checker |
//! | `objectmeta.rs` | `metadata` decoded as ObjectMeta (unknown fields dropped) | `pkg/apiserver/schema/objectmeta` |
//! | `refs.rs` | `$ref`s of an OpenAPI document (built-in kinds) | kube-apiserver `/openapi/v3` |
//! | `fields.rs` | fieldValidation, duplicates | KEP-2885, `test/e2e/apimachinery/field_validation.go` |
//! | `causes.rs` | field errors and the 422 | apimachinery `pkg/util/validation/field`, `apierrors.NewInvalid` |
//! | `builtin.rs` | built-in kinds' schemas from k8s-openapi (`schemars`) | kube-apiserver `/openapi/v3` |
//! | `shared.rs` | [`SchemaRef`]: a schema as registry entries share it, compiled once | |

pub mod builtin;
pub mod causes;
pub mod cel;
pub mod cel_check;
pub mod defaults;
pub mod fields;
pub mod lists;
pub mod model;
pub mod objectmeta;
pub mod prune;
pub mod refs;
pub mod shared;
pub mod structural;
pub mod validate;

#[cfg(test)]
mod real_crds;

use serde_json::Value;

pub use causes::{ErrorType, FieldError, Invalid, go_print};
pub use fields::{FieldReport, FieldValidation, parse_with_duplicates};
pub use model::Node;
pub use shared::SchemaRef;

/// Which part of an object a write may change, and so which errors count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The main resource (create, update, patch, apply, scale writes through it).
    Main,
    /// The `status` subresource: only errors under `status` are reported
    /// (customresource `status_strategy.go`).
    Status,
}

/// The result of admitting a write: the warnings to send as `Warning` headers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Admitted {
    /// `unknown field "spec.x"` / `duplicate field "spec.y"` under `Warn`.
    pub warnings: Vec<String>,
}

/// Why a write was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Refused {
    /// Strict field validation failed: the message (`strict decoding error: ...`); 400.
    #[error("{0}")]
    Strict(String),
    /// The object is invalid: 422 with causes.
    #[error(transparent)]
    Invalid(#[from] Invalid),
}

/// The `scale` subresource's paths (`subresources.scale`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScalePaths {
    /// `specReplicasPath`, e.g. `.spec.replicas`.
    pub spec_replicas: String,
    /// `statusReplicasPath`.
    pub status_replicas: String,
    /// `labelSelectorPath`, if any.
    pub label_selector: Option<String>,
}

/// One CRD version's compiled schema.
#[derive(Debug)]
pub struct CrdSchema {
    root: Node,
    rules: Option<cel::Rules>,
    status: bool,
    scale: Option<ScalePaths>,
    defaults: bool,
}

impl CrdSchema {
    /// Compiles version `version` (the JSON of a `CustomResourceDefinitionVersion`, at
    /// `spec.versions[index]`) of a CRD for `group`/`kind`: structural check, patterns,
    /// CEL rules. The errors are the CRD's own 422 causes.
    pub fn compile(
        group: &str,
        kind: &str,
        version: &Value,
        index: usize,
    ) -> Result<CrdSchema, Vec<FieldError>> {
        let prefix = format!("spec.versions[{index}].schema.openAPIV3Schema");
        let Some(schema) = version.pointer("/schema/openAPIV3Schema") else {
            return Err(vec![FieldError::required(
                &format!("spec.versions[{index}].schema.openAPIV3Schema"),
                "schemas are required",
            )]);
        };
        let name = version
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let mut me = Self::from_openapi(group, kind, name, schema, &prefix)?;
        me.status = version.pointer("/subresources/status").is_some();
        me.scale = version.pointer("/subresources/scale").map(|s| {
            let get = |k: &str| s.get(k).and_then(Value::as_str).map(str::to_owned);
            ScalePaths {
                spec_replicas: get("specReplicasPath").unwrap_or_default(),
                status_replicas: get("statusReplicasPath").unwrap_or_default(),
                label_selector: get("labelSelectorPath"),
            }
        });
        Ok(me)
    }

    /// [`CrdSchema::compile`] for a typed version, e.g. k8s-openapi's
    /// `CustomResourceDefinitionVersion` (anything that serializes to its JSON).
    pub fn compile_typed<T: serde::Serialize>(
        group: &str,
        kind: &str,
        version: &T,
        index: usize,
    ) -> Result<CrdSchema, Vec<FieldError>> {
        let json = serde_json::to_value(version).map_err(|e| {
            vec![FieldError::invalid(
                &format!("spec.versions[{index}]"),
                &Value::Null,
                e.to_string(),
            )]
        })?;
        Self::compile(group, kind, &json, index)
    }

    /// Compiles an `openAPIV3Schema` alone (errors under `prefix`).
    pub fn from_openapi(
        group: &str,
        kind: &str,
        version: &str,
        schema: &Value,
        prefix: &str,
    ) -> Result<CrdSchema, Vec<FieldError>> {
        let root = Node::parse(schema, prefix)
            .map_err(|e| vec![FieldError::invalid(&e.path, &Value::Null, e.message)])?;
        let mut errs = structural::check(&root, prefix);
        if errs.is_empty() {
            // kube-apiserver validates defaults once the schema is structural.
            errs.extend(defaults::validate_defaults(&root, prefix));
        }
        let api_version = if group.is_empty() {
            version.to_owned()
        } else {
            format!("{group}/{version}")
        };
        let ctx = kube_cel::RootContext {
            api_version,
            api_group: group.to_owned(),
            kind: kind.to_owned(),
        };
        let rules = match cel::Rules::compile(schema, &root, prefix, ctx) {
            Ok(r) => Some(r),
            Err(e) => {
                errs.extend(e);
                None
            }
        };
        match rules {
            Some(rules) if errs.is_empty() => Ok(CrdSchema {
                defaults: defaults::declares_defaults(&root),
                root,
                rules: Some(rules),
                status: false,
                scale: None,
            }),
            _ => Err(errs),
        }
    }

    /// A schema used for unknown fields only (a built-in kind's, from [`builtin`]): no
    /// rules, no defaults applied.
    pub fn fields_only(root: Node) -> CrdSchema {
        CrdSchema {
            root,
            rules: None,
            status: false,
            scale: None,
            defaults: false,
        }
    }

    /// Whether any node declares a `default` (else reads never need [`Self::read_back`]).
    pub fn has_defaults(&self) -> bool {
        self.defaults
    }

    /// Whether [`Self::read_back`] would change `obj`: false without a copy for objects
    /// stored already defaulted, which is every object written with the schema in force.
    pub fn needs_read_back(&self, obj: &Value) -> bool {
        self.defaults && defaults::needs_defaults(&self.root, obj)
    }

    /// The write path of a kind whose values are validated elsewhere (a built-in kind):
    /// unknown fields are pruned and, with `duplicates`, judged by `mode`; nothing else.
    pub fn check_fields(
        &self,
        obj: &mut Value,
        duplicates: &[String],
        mode: FieldValidation,
    ) -> Result<Admitted, Refused> {
        let report = FieldReport {
            unknown: self.prune(obj),
            duplicates: duplicates.to_vec(),
        };
        let warnings = report.outcome(mode).map_err(Refused::Strict)?;
        Ok(Admitted { warnings })
    }

    /// The root schema node.
    pub fn root(&self) -> &Node {
        &self.root
    }

    /// Whether the version has a `status` subresource.
    pub fn has_status(&self) -> bool {
        self.status
    }

    /// The `scale` subresource's paths, if it has one.
    pub fn scale(&self) -> Option<&ScalePaths> {
        self.scale.as_ref()
    }

    /// The schema of `status`, validated alone by the status subresource.
    pub fn status_schema(&self) -> Option<&Node> {
        self.root.properties.get("status")
    }

    /// Drops unknown fields; returns their paths.
    pub fn prune(&self, obj: &mut Value) -> Vec<String> {
        prune::prune(&self.root, obj)
    }

    /// Applies defaults in place.
    pub fn apply_defaults(&self, obj: &mut Value) {
        defaults::apply_defaults(&self.root, obj);
    }

    /// OpenAPI validation, then CEL rules (with `old` for transition rules); errors
    /// outside `scope` are not reported.
    pub fn validate(&self, obj: &Value, old: Option<&Value>, scope: Scope) -> Result<(), Invalid> {
        let mut errors = Vec::new();
        validate::validate(&self.root, obj, "", &mut errors);
        // customresource strategy.go: CEL runs unless a type, enum, required, too-long or
        // too-many error blocks it (the rules' cost bounds no longer hold), in
        // which case one error says so (`hasBlockingErr`); a schema without rules has no
        // CEL validator, so nothing to say.
        if let Some(rules) = self.rules.as_ref().filter(|r| r.has_rules()) {
            let blocked = errors.iter().any(|e| {
                matches!(
                    e.kind,
                    ErrorType::TypeInvalid
                        | ErrorType::NotSupported
                        | ErrorType::Required
                        | ErrorType::TooLong
                        | ErrorType::TooMany
                )
            });
            if blocked {
                errors.push(FieldError::invalid(
                    "<nil>",
                    &Value::Null,
                    "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
                ));
            } else {
                errors.extend(rules.validate(obj, old));
            }
        }
        if scope == Scope::Status {
            errors.retain(|e| {
                e.field == "status"
                    || e.field.starts_with("status.")
                    || e.field.starts_with("status[")
            });
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(Invalid { errors })
        }
    }

    /// The whole write path of a create (`old = None`) or an update/patch/apply
    /// (`old = Some`): prune (the dropped fields plus `duplicates` are judged by `mode`),
    /// default, validate. `obj` is left pruned and defaulted: what to store.
    pub fn admit(
        &self,
        obj: &mut Value,
        old: Option<&Value>,
        duplicates: &[String],
        mode: FieldValidation,
        scope: Scope,
    ) -> Result<Admitted, Refused> {
        let report = FieldReport {
            unknown: self.prune(obj),
            duplicates: duplicates.to_vec(),
        };
        let warnings = report.outcome(mode).map_err(Refused::Strict)?;
        self.apply_defaults(obj);
        self.validate(obj, old, scope)?;
        Ok(Admitted { warnings })
    }

    /// What a read returns: stored objects get defaults added since they were written
    /// (CRD docs "Defaulting": "when reading from etcd") and unknown fields pruned.
    pub fn read_back(&self, obj: &mut Value) {
        self.prune(obj);
        self.apply_defaults(obj);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn schema(spec: Value) -> CrdSchema {
        CrdSchema::from_openapi(
            "example.com",
            "Foo",
            "v1",
            &json!({"type": "object", "properties": {"spec": spec, "status": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}}}}),
            "spec.versions[0].schema.openAPIV3Schema",
        )
        .expect("schema compiles")
    }

    fn errors(s: &CrdSchema, obj: Value) -> Vec<String> {
        match s.validate(&obj, None, Scope::Main) {
            Ok(()) => vec![],
            Err(e) => e
                .errors
                .iter()
                .filter(|e| e.field != "<nil>")
                .map(ToString::to_string)
                .collect(),
        }
    }

    /// customresource strategy.go `hasBlockingErr`: a type error keeps CEL rules from
    /// running and says so.
    #[test]
    fn type_errors_block_cel() {
        let s = schema(
            json!({"type": "object", "properties": {"n": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": "false", "message": "never"}]}),
        );
        let e = s
            .validate(&json!({"spec": {"n": "x"}}), None, Scope::Main)
            .expect_err("invalid");
        let msgs: Vec<String> = e.errors.iter().map(ToString::to_string).collect();
        assert_eq!(msgs.len(), 2, "{msgs:?}");
        assert!(
            msgs[1].starts_with(
                "<nil>: Invalid value: \"null\": some validation rules were not checked"
            )
        );
        let e = s
            .validate(&json!({"spec": {"n": 1}}), None, Scope::Main)
            .expect_err("rule fails");
        assert_eq!(
            e.errors[0].to_string(),
            "spec: Invalid value: \"object\": never"
        );
    }

    /// The example message (apiextensions-apiserver pkg/apiserver/validation:
    /// maximum → field.Invalid with kube-openapi's "should be less than or equal to").
    #[test]
    fn maximum_message_and_422() {
        let s = schema(
            json!({"type": "object", "properties": {"replicas": {"type": "integer", "maximum": 10}}}),
        );
        let err = s
            .validate(&json!({"spec": {"replicas": 11}}), None, Scope::Main)
            .expect_err("invalid");
        assert_eq!(
            err.to_api_error("example.com", "Foo", "x").message,
            "Foo.example.com \"x\" is invalid: spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"
        );
    }

    /// kube-openapi validate (type_validator, number/string/slice/object validators) with
    /// the conversions of apiextensions-apiserver pkg/apiserver/validation/validation.go.
    #[test]
    fn openapi_constraints() {
        let s = schema(
            json!({"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string", "minLength": 2, "maxLength": 4, "pattern": "^[a-z]+$"},
            "mode": {"type": "string", "enum": ["A", "B"]},
            "n": {"type": "integer", "minimum": 0, "exclusiveMinimum": true, "multipleOf": 2},
            "f": {"type": "number", "maximum": 1.5, "exclusiveMaximum": true},
            "l": {"type": "array", "minItems": 1, "maxItems": 2, "uniqueItems": true, "items": {"type": "integer"}},
            "m": {"type": "object", "minProperties": 1, "maxProperties": 1, "additionalProperties": {"type": "string"}},
            "t": {"type": "string", "format": "date-time"},
            "i32": {"type": "integer", "format": "int32"},
            "ios": {"x-kubernetes-int-or-string": true},
            "nul": {"type": "string", "nullable": true}}}),
        );
        assert_eq!(
            errors(&s, json!({"spec": {"name": "ab", "ios": 3, "nul": null}})),
            Vec::<String>::new()
        );
        assert_eq!(
            errors(&s, json!({"spec": {"name": "ab", "ios": "3"}})),
            Vec::<String>::new()
        );
        let cases = [
            (json!({}), "spec.name: Required value"),
            (
                json!({"name": "a"}),
                "spec.name: Invalid value: \"a\": spec.name in body should be at least 2 chars long",
            ),
            (
                json!({"name": "abcde"}),
                "spec.name: Too long: may not be more than 4 bytes",
            ),
            (
                json!({"name": "AB"}),
                "spec.name: Invalid value: \"AB\": spec.name in body should match '^[a-z]+$'",
            ),
            (
                json!({"name": "ab", "mode": "C"}),
                "spec.mode: Unsupported value: \"C\": supported values: \"A\", \"B\"",
            ),
            (
                json!({"name": "ab", "n": 0}),
                "spec.n: Invalid value: 0: spec.n in body should be greater than 0",
            ),
            (
                json!({"name": "ab", "n": 3}),
                "spec.n: Invalid value: 3: spec.n in body should be a multiple of 2",
            ),
            (
                json!({"name": "ab", "n": "x"}),
                "spec.n: Invalid value: \"x\": spec.n in body must be of type integer: \"string\"",
            ),
            (
                json!({"name": "ab", "f": 1.5}),
                "spec.f: Invalid value: 1.5: spec.f in body should be less than 1.5",
            ),
            (
                json!({"name": "ab", "l": []}),
                "spec.l: Invalid value: []interface {}{}: spec.l in body should have at least 1 items",
            ),
            (
                json!({"name": "ab", "l": [1, 2, 3]}),
                "spec.l: Too many: 3: must have at most 2 items",
            ),
            (
                json!({"name": "ab", "l": [1, 1]}),
                "spec.l: Invalid value: []interface {}{1, 1}: spec.l in body shouldn't contain duplicates",
            ),
            (
                json!({"name": "ab", "m": {}}),
                "spec.m: Invalid value: map[string]interface {}{}: spec.m in body should have at least 1 properties",
            ),
            (
                json!({"name": "ab", "m": {"a": "1", "b": "2"}}),
                "spec.m: Too many: 2: must have at most 1 items",
            ),
            (
                json!({"name": "ab", "m": {"a": 1}}),
                "spec.m.a: Invalid value: 1: spec.m.a in body must be of type string: \"integer\"",
            ),
            (
                json!({"name": "ab", "t": "yesterday"}),
                "spec.t: Invalid value: \"yesterday\": spec.t in body must be of type date-time: \"yesterday\"",
            ),
            (
                json!({"name": "ab", "i32": 4294967296_i64}),
                "spec.i32: Invalid value: 4294967296: spec.i32 in body must be of type int32: 4294967296",
            ),
            (
                json!({"name": "ab", "ios": true}),
                "spec.ios: Invalid value: true: spec.ios in body must be of type integer,string: \"boolean\"",
            ),
        ];
        for (spec, want) in cases {
            assert_eq!(
                errors(&s, json!({"spec": spec})),
                vec![want.to_string()],
                "for {spec}"
            );
        }
    }

    /// CRD docs "Specifying a structural schema": a missing type, properties beside
    /// additionalProperties, types inside value validations, and an invalid list-map are
    /// refused when the CRD is written.
    #[test]
    fn non_structural_schemas_are_refused() {
        let bad = json!({"type": "object", "properties": {
            "a": {"description": "no type"},
            "b": {"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": {"type": "string"}},
            "c": {"type": "string", "anyOf": [{"type": "integer"}]},
            "d": {"type": "array", "x-kubernetes-list-type": "map", "items": {"type": "object", "properties": {"k": {"type": "string"}}}},
            "e": {"type": "object", "additionalProperties": false}}});
        let errs = CrdSchema::from_openapi(
            "g",
            "K",
            "v1",
            &bad,
            "spec.versions[0].schema.openAPIV3Schema",
        )
        .expect_err("non-structural");
        let msgs: Vec<String> = errs.iter().map(ToString::to_string).collect();
        let p = "spec.versions[0].schema.openAPIV3Schema.properties";
        for want in [
            format!("{p}[a].type: Required value: must not be empty for specified object fields"),
            format!(
                "{p}[b].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"
            ),
            format!("{p}[c].anyOf[0].type: Forbidden: must be empty to be structural"),
            format!(
                "{p}[d].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map"
            ),
            format!("{p}[e].additionalProperties: Forbidden: must not be used"),
        ] {
            assert!(msgs.contains(&want), "missing {want} in {msgs:#?}");
        }
    }

    /// CRD docs "Validation rules": a rule that does not compile makes the CRD invalid.
    #[test]
    fn uncompilable_rule_rejects_crd() {
        let bad = json!({"type": "object", "properties": {"spec": {"type": "object",
            "x-kubernetes-validations": [{"rule": "self.a ==", "message": "m"}]}}});
        let errs = CrdSchema::from_openapi("g", "K", "v1", &bad, "p").expect_err("bad rule");
        assert_eq!(errs.len(), 1);
        assert_eq!(
            errs[0].field,
            "p.properties[spec].x-kubernetes-validations[0].rule"
        );
        assert!(
            errs[0].detail.starts_with("compilation failed"),
            "{}",
            errs[0]
        );
    }

    /// A rule on a node CEL has no type for (no `type`, or an array of such items) makes
    /// the CRD invalid, as kube-apiserver refuses it (`k8s.io/apiserver/pkg/cel/common/
    /// schemas.go` `SchemaDeclType` is nil there; apiextensions-apiserver
    /// `pkg/apiserver/schema/cel/compilation.go`); an int-or-string node is `dyn` and may
    /// carry rules.
    #[test]
    fn rules_on_nodes_cel_cannot_type_reject_the_crd() {
        let bad = json!({"type": "object", "properties": {
            "any": {"x-kubernetes-preserve-unknown-fields": true,
                    "x-kubernetes-validations": [{"rule": "true"}]},
            "list": {"type": "array", "items": {"x-kubernetes-preserve-unknown-fields": true},
                     "x-kubernetes-validations": [{"rule": "size(self) == 2"}]},
            "port": {"x-kubernetes-int-or-string": true,
                     "x-kubernetes-validations": [{"rule": "self != 0"}]}}});
        let errs = CrdSchema::from_openapi("g", "K", "v1", &bad, "p").expect_err("untyped rules");
        let msgs: Vec<String> = errs.iter().map(ToString::to_string).collect();
        assert_eq!(
            msgs,
            [
                "p.properties[any].x-kubernetes-validations: Internal error: rule declared on schema that does not support validation rules type: '' x-kubernetes-preserve-unknown-fields: 'true'",
                "p.properties[list].x-kubernetes-validations: Internal error: rule declared on schema that does not support validation rules type: 'array' x-kubernetes-preserve-unknown-fields: 'false'",
            ]
        );
    }

    /// CRD docs "Validation rules": message, messageExpression, reason, fieldPath,
    /// transition rules with oldSelf (skipped on create), optionalOldSelf, and the Kubernetes
    /// CEL library (quantity, url, ip/cidr, regex, lists, format).
    #[test]
    fn cel_rules() {
        let s = CrdSchema::from_openapi("example.com", "Foo", "v1", &json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {
                "min": {"type": "integer"}, "max": {"type": "integer"},
                "mem": {"type": "string"}, "url": {"type": "string"}, "ip": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "name": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "name is immutable"}]},
                "count": {"type": "integer", "x-kubernetes-validations": [{"rule": "self >= oldSelf", "message": "count may not decrease"}]}},
            "x-kubernetes-validations": [
                {"rule": "!has(self.min) || !has(self.max) || self.min <= self.max", "messageExpression": "'min ' + string(self.min) + ' exceeds max ' + string(self.max)"},
                {"rule": "!has(self.mem) || quantity(self.mem).isLessThan(quantity('1Gi'))", "message": "mem too big", "fieldPath": ".mem"},
                {"rule": "!has(self.url) || isURL(self.url) && url(self.url).getScheme() == 'https'", "message": "https url", "reason": "FieldValueForbidden"},
                {"rule": "!has(self.ip) || isCIDR(self.ip) && cidr(self.ip).ip().family() == 4", "message": "ipv4 cidr"},
                {"rule": "!has(self.tags) || self.tags.all(t, t.matches('^[a-z]+$')) && self.tags.isSorted()", "message": "sorted lowercase tags"},
                {"rule": "!has(self.tags) || !self.tags.exists(t, t == 'forbidden')", "message": "no forbidden tag", "reason": "FieldValueRequired"}]}}}), "p").expect("compiles");
        let errs = |obj: Value, old: Option<Value>| -> Vec<String> {
            match s.validate(&obj, old.as_ref(), Scope::Main) {
                Ok(()) => vec![],
                Err(e) => e.errors.iter().map(ToString::to_string).collect(),
            }
        };
        assert_eq!(
            errs(
                json!({"spec": {"min": 1, "max": 2, "mem": "512Mi", "url": "https://x", "ip": "10.0.0.0/8", "tags": ["a", "b"], "name": "n", "count": 1}}),
                None
            ),
            Vec::<String>::new()
        );
        assert_eq!(
            errs(json!({"spec": {"min": 3, "max": 2}}), None),
            vec!["spec: Invalid value: \"object\": min 3 exceeds max 2"]
        );
        assert_eq!(
            errs(json!({"spec": {"mem": "2Gi"}}), None),
            vec!["spec.mem: Invalid value: \"string\": mem too big"]
        );
        assert_eq!(
            errs(json!({"spec": {"url": "http://x"}}), None),
            vec!["spec: Forbidden: https url"]
        );
        assert_eq!(
            errs(json!({"spec": {"ip": "fd00::/8"}}), None),
            vec!["spec: Invalid value: \"object\": ipv4 cidr"]
        );
        assert_eq!(
            errs(json!({"spec": {"tags": ["b", "a"]}}), None),
            vec!["spec: Invalid value: \"object\": sorted lowercase tags"]
        );
        assert_eq!(
            errs(json!({"spec": {"tags": ["forbidden"]}}), None),
            vec!["spec: Required value: no forbidden tag"]
        );
        // transition rules: skipped on create, enforced on update
        assert_eq!(
            errs(json!({"spec": {"name": "b"}}), None),
            Vec::<String>::new()
        );
        assert_eq!(
            errs(
                json!({"spec": {"name": "b"}}),
                Some(json!({"spec": {"name": "a"}}))
            ),
            vec!["spec.name: Invalid value: \"string\": name is immutable"]
        );
        assert_eq!(
            errs(
                json!({"spec": {"count": 1}}),
                Some(json!({"spec": {"count": 2}}))
            ),
            vec!["spec.count: Invalid value: \"integer\": count may not decrease"]
        );
        assert_eq!(
            errs(json!({"spec": {"count": 1}}), None),
            Vec::<String>::new()
        );
        // evaluation errors are reported, not swallowed (cel/validation.go)
        let e = errs(json!({"spec": {"mem": "not-a-quantity"}}), None);
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(
            e[0].starts_with("spec.mem: Invalid value: \"string\": "),
            "{e:?}"
        );
    }

    /// The whole write path: unknown fields pruned and judged by fieldValidation, defaults
    /// applied before validation (CRD docs "Defaulting": defaults then validation).
    #[test]
    fn admit_prunes_defaults_validates() {
        let s = schema(
            json!({"type": "object", "properties": {"replicas": {"type": "integer", "default": 1, "maximum": 10}}}),
        );
        let mut obj = json!({"apiVersion": "example.com/v1", "kind": "Foo", "metadata": {"name": "x"}, "spec": {"bogus": 1}});
        let ok = s
            .admit(
                &mut obj,
                None,
                &["spec.replicas".into()],
                FieldValidation::Warn,
                Scope::Main,
            )
            .expect("admitted");
        assert_eq!(
            ok.warnings,
            vec![
                "unknown field \"spec.bogus\"",
                "duplicate field \"spec.replicas\""
            ]
        );
        assert_eq!(obj["spec"], json!({"replicas": 1}));
        let mut obj = json!({"spec": {"bogus": 1}});
        assert_eq!(
            s.admit(&mut obj, None, &[], FieldValidation::Strict, Scope::Main),
            Err(Refused::Strict(
                "strict decoding error: unknown field \"spec.bogus\"".into()
            ))
        );
        let mut obj = json!({"spec": {"bogus": 1}});
        assert_eq!(
            s.admit(&mut obj, None, &[], FieldValidation::Ignore, Scope::Main),
            Ok(Admitted::default())
        );
        let mut obj = json!({"spec": {"replicas": 11}});
        assert!(matches!(
            s.admit(&mut obj, None, &[], FieldValidation::Strict, Scope::Main),
            Err(Refused::Invalid(_))
        ));
    }

    /// CRD docs "Defaulting": defaults are applied when reading from etcd, so an object
    /// stored before a default was added reads back with it; unknown fields are pruned.
    #[test]
    fn read_back_defaults_and_prunes() {
        let s = schema(
            json!({"type": "object", "properties": {"replicas": {"type": "integer", "default": 1}}}),
        );
        let mut stored = json!({"metadata": {"name": "x"}, "spec": {"old": true}});
        s.read_back(&mut stored);
        assert_eq!(
            stored,
            json!({"metadata": {"name": "x"}, "spec": {"replicas": 1}})
        );
    }

    /// customresource status_strategy: the status subresource reports status errors only;
    /// the main resource reports all.
    #[test]
    fn status_scope() {
        let s = schema(
            json!({"type": "object", "properties": {"replicas": {"type": "integer", "maximum": 10}}}),
        );
        let obj = json!({"spec": {"replicas": 11}, "status": {"n": -1}});
        assert_eq!(
            s.validate(&obj, None, Scope::Main)
                .expect_err("bad")
                .errors
                .len(),
            2
        );
        let st = s
            .validate(&obj, None, Scope::Status)
            .expect_err("bad status");
        assert_eq!(st.errors.len(), 1);
        assert_eq!(st.errors[0].field, "status.n");
        assert!(s.status_schema().is_some());
    }

    /// The typed entry point takes k8s-openapi's CRD version type; subresources are read.
    #[test]
    fn compile_from_k8s_openapi_type() {
        use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionVersion;
        let v: CustomResourceDefinitionVersion = serde_json::from_value(json!({
            "name": "v1", "served": true, "storage": true,
            "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}}))
        .expect("typed version");
        let s = CrdSchema::compile_typed("example.com", "Foo", &v, 0).expect("compiles");
        assert!(s.has_status());
        assert_eq!(
            s.scale().map(|p| p.spec_replicas.as_str()),
            Some(".spec.replicas")
        );
        let bad: CustomResourceDefinitionVersion =
            serde_json::from_value(json!({"name": "v1", "served": true, "storage": true}))
                .expect("typed");
        let e = CrdSchema::compile_typed("example.com", "Foo", &bad, 2).expect_err("no schema");
        assert_eq!(
            e[0].to_string(),
            "spec.versions[2].schema.openAPIV3Schema: Required value: schemas are required"
        );
    }

    /// Validation cost of a typical CR create (figures for the report; not asserted).
    #[test]
    fn timing_typical_create() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/testdata/crds/cert-manager.io_certificates.yaml"
        ))
        .expect("testdata");
        let crd: Value = serde_saphyr::from_str(&text).expect("yaml");
        let s = CrdSchema::compile(
            "cert-manager.io",
            "Certificate",
            &crd["spec"]["versions"][0],
            0,
        )
        .expect("compiles");
        let obj = json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": "c", "namespace": "d"},
            "spec": {"secretName": "s", "dnsNames": ["a.example.com"], "issuerRef": {"name": "i", "kind": "Issuer"}, "duration": "2160h"}});
        let n = 2000;
        let t = std::time::Instant::now();
        for _ in 0..n {
            let mut o = obj.clone();
            s.admit(&mut o, None, &[], FieldValidation::Warn, Scope::Main)
                .expect("valid");
        }
        eprintln!(
            "cert-manager Certificate admit: {:?} per create",
            t.elapsed() / n
        );
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/testdata/crds/gateway.networking.k8s.io_gateways.yaml"
        ))
        .expect("testdata");
        let crd: Value = serde_saphyr::from_str(&text).expect("yaml");
        let t = std::time::Instant::now();
        let s = CrdSchema::compile(
            "gateway.networking.k8s.io",
            "Gateway",
            &crd["spec"]["versions"][0],
            0,
        )
        .expect("compiles");
        eprintln!(
            "Gateway v1 schema compile (32 CEL rules): {:?}",
            t.elapsed()
        );
        let obj = json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "metadata": {"name": "g", "namespace": "d"},
            "spec": {"gatewayClassName": "gc", "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"},
                {"name": "https", "port": 443, "protocol": "HTTPS", "hostname": "a.example.com", "tls": {"mode": "Terminate", "certificateRefs": [{"name": "c"}]}}]}});
        let t = std::time::Instant::now();
        for _ in 0..n {
            let mut o = obj.clone();
            s.admit(&mut o, None, &[], FieldValidation::Warn, Scope::Main)
                .expect("valid");
        }
        eprintln!(
            "Gateway (2 listeners, CEL) admit: {:?} per create",
            t.elapsed() / n
        );
    }

    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
            "[a-z0-9:/.-]{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map(
                    "(spec|status|replicas|name|l|m|x|[a-z]{1,3})",
                    inner,
                    0..6
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Bad input never panics: arbitrary JSON through the whole write path of a schema
        /// with every feature, and of a real CRD with CEL rules.
        #[test]
        fn admit_never_panics(obj in arb_json(), old in arb_json()) {
            let s = schema(json!({"type": "object", "properties": {
                "replicas": {"type": "integer", "default": 3, "maximum": 10, "multipleOf": 3},
                "name": {"type": "string", "pattern": "^a", "format": "date-time", "x-kubernetes-validations": [{"rule": "self.size() > 1"}]},
                "l": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}},
                "m": {"type": "object", "additionalProperties": {"type": "integer", "nullable": true}}},
                "x-kubernetes-validations": [{"rule": "self.replicas == oldSelf.replicas", "messageExpression": "string(self.replicas)"}]}));
            let mut o = obj.clone();
            let _ = s.admit(&mut o, Some(&old), &[], FieldValidation::Strict, Scope::Main);
            let mut o = obj;
            let _ = s.admit(&mut o, None, &[], FieldValidation::Warn, Scope::Status);
            let bytes = serde_json::to_vec(&o).unwrap_or_default();
            prop_assert!(parse_with_duplicates(&bytes).is_ok());
        }
    }
}
