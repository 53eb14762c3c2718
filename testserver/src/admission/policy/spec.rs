//! The parts of the policy and binding objects evaluation reads
//! (`admissionregistration.k8s.io/v1` ValidatingAdmissionPolicy, MutatingAdmissionPolicy
//! and their bindings), deserialized from the stored JSON. Unknown fields are ignored;
//! a stored object that does not deserialize is a configuration error of that policy.

use serde::Deserialize;
use serde_json::Value;

/// `metadata` fields evaluation needs.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Meta {
    /// `metadata.name`.
    pub(crate) name: String,
    /// `metadata.uid`.
    pub(crate) uid: String,
    /// `metadata.resourceVersion`.
    pub(crate) resource_version: String,
}

/// `RuleWithOperations` with `resourceNames` (`NamedRuleWithOperations`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct NamedRule {
    /// `operations` (`*` for all).
    pub(crate) operations: Vec<String>,
    /// `apiGroups`.
    pub(crate) api_groups: Vec<String>,
    /// `apiVersions`.
    pub(crate) api_versions: Vec<String>,
    /// `resources` (`pods`, `pods/status`, `*`, `*/*`, `pods/*`, `*/scale`).
    pub(crate) resources: Vec<String>,
    /// `resourceNames` (empty: any).
    pub(crate) resource_names: Vec<String>,
    /// `scope`: `Cluster`, `Namespaced` or `*` (the default).
    pub(crate) scope: Option<String>,
}

/// `MatchResources` (a policy's `matchConstraints`, a binding's `matchResources`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct MatchResources {
    /// `namespaceSelector` (a `metav1.LabelSelector`).
    pub(crate) namespace_selector: Option<Value>,
    /// `objectSelector`.
    pub(crate) object_selector: Option<Value>,
    /// `resourceRules`.
    pub(crate) resource_rules: Vec<NamedRule>,
    /// `excludeResourceRules`.
    pub(crate) exclude_resource_rules: Vec<NamedRule>,
    /// `matchPolicy`: `Exact` or `Equivalent` (the API's default).
    pub(crate) match_policy: Option<String>,
}

/// `ParamKind`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct ParamKind {
    /// `apiVersion` (`group/version`, or `v1`).
    pub(crate) api_version: String,
    /// `kind`.
    pub(crate) kind: String,
}

/// `ParamRef`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct ParamRef {
    /// `name`.
    pub(crate) name: Option<String>,
    /// `namespace`.
    pub(crate) namespace: Option<String>,
    /// `selector`.
    pub(crate) selector: Option<Value>,
    /// `parameterNotFoundAction`: `Allow` or `Deny`.
    pub(crate) parameter_not_found_action: Option<String>,
}

/// A named expression (`variables[]`, `matchConditions[]`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct NamedExpression {
    /// `name`.
    pub(crate) name: String,
    /// `expression`.
    pub(crate) expression: String,
}

/// `Validation`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Validation {
    /// `expression`.
    pub(crate) expression: String,
    /// `message`.
    pub(crate) message: Option<String>,
    /// `messageExpression`.
    pub(crate) message_expression: Option<String>,
    /// `reason`: `Unauthorized`, `Forbidden`, `Invalid` (default), `RequestEntityTooLarge`.
    pub(crate) reason: Option<String>,
}

/// `AuditAnnotation`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct AuditAnnotation {
    /// `key`.
    pub(crate) key: String,
    /// `valueExpression`.
    pub(crate) value_expression: String,
}

/// `Mutation`'s `applyConfiguration` / `jsonPatch`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct MutationExpression {
    /// `expression`.
    pub(crate) expression: String,
}

/// `Mutation`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Mutation {
    /// `patchType`: `ApplyConfiguration` or `JSONPatch`.
    pub(crate) patch_type: String,
    /// `applyConfiguration`.
    pub(crate) apply_configuration: Option<MutationExpression>,
    /// `jsonPatch`.
    pub(crate) json_patch: Option<MutationExpression>,
}

/// The spec of a ValidatingAdmissionPolicy or a MutatingAdmissionPolicy (one type for
/// both: the fields of the other kind stay empty).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct PolicySpec {
    /// `paramKind`.
    pub(crate) param_kind: Option<ParamKind>,
    /// `matchConstraints` (required by the API; a policy without any matches nothing and
    /// is a configuration error, as in kube-apiserver).
    pub(crate) match_constraints: Option<MatchResources>,
    /// `variables`.
    pub(crate) variables: Vec<NamedExpression>,
    /// `matchConditions`.
    pub(crate) match_conditions: Vec<NamedExpression>,
    /// `failurePolicy`: `Fail` (default) or `Ignore`.
    pub(crate) failure_policy: Option<String>,
    /// `validations` (ValidatingAdmissionPolicy).
    pub(crate) validations: Vec<Validation>,
    /// `auditAnnotations` (ValidatingAdmissionPolicy).
    pub(crate) audit_annotations: Vec<AuditAnnotation>,
    /// `mutations` (MutatingAdmissionPolicy).
    pub(crate) mutations: Vec<Mutation>,
    /// `reinvocationPolicy`: `Never` (default) or `IfNeeded` (MutatingAdmissionPolicy).
    pub(crate) reinvocation_policy: Option<String>,
}

impl PolicySpec {
    /// Whether errors are ignored (`failurePolicy: Ignore`).
    pub(crate) fn ignores_errors(&self) -> bool {
        self.failure_policy.as_deref() == Some("Ignore")
    }
}

/// A policy object.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Policy {
    /// `metadata`.
    pub(crate) metadata: Meta,
    /// `spec`.
    pub(crate) spec: PolicySpec,
}

/// The spec of a binding (validating or mutating).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct BindingSpec {
    /// `policyName`.
    pub(crate) policy_name: String,
    /// `paramRef`.
    pub(crate) param_ref: Option<ParamRef>,
    /// `matchResources` (narrows the policy's constraints).
    pub(crate) match_resources: Option<MatchResources>,
    /// `validationActions` (ValidatingAdmissionPolicyBinding): `Deny`, `Warn`, `Audit`.
    pub(crate) validation_actions: Vec<String>,
}

/// A binding object.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Binding {
    /// `metadata`.
    pub(crate) metadata: Meta,
    /// `spec`.
    pub(crate) spec: BindingSpec,
}
