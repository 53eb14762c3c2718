//! The policies through `validate` and `mutate`, on an engine whose policies, bindings,
//! params and namespaces are created through `Engine::create` (the mutating policies,
//! not served yet, are put in the store directly). Each test names the kube-apiserver
//! source whose behaviour it checks.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{compile_errors, mutate_with_reinvocation, validate};
use crate::{
    engine::{Engine, EngineConfig, WriteOptions},
    registry::GroupResource,
    store::Write,
};

const GROUP: &str = "admissionregistration.k8s.io";

fn engine() -> Arc<Engine> {
    let e = Engine::with_controllers(EngineConfig::default(), vec![]);
    namespace(&e, "default", json!({}));
    e
}

fn create(e: &Engine, group: &str, version: &str, plural: &str, ns: Option<&str>, obj: Value) {
    let t = e.target(group, version, plural, ns, None);
    if let Err(err) = e.create(&t, obj, &WriteOptions::default()) {
        panic!("create {plural}: {err}");
    }
}

fn namespace(e: &Engine, name: &str, labels: Value) {
    create(
        e,
        "",
        "v1",
        "namespaces",
        None,
        json!({"metadata": {"name": name, "labels": labels}}),
    );
}

/// A ValidatingAdmissionPolicy on apps/v1 deployments (CREATE, UPDATE) with `spec`
/// merged over the defaults.
fn vap(e: &Engine, name: &str, spec: Value) {
    let mut full = json!({
        "failurePolicy": "Fail",
        "matchConstraints": {"resourceRules": [{
            "apiGroups": ["apps"], "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"], "resources": ["deployments"]}]},
    });
    super::mutating::merge(&mut full, spec);
    create(
        e,
        GROUP,
        "v1",
        "validatingadmissionpolicies",
        None,
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
               "metadata": {"name": name}, "spec": full}),
    );
}

fn vapb(e: &Engine, name: &str, policy: &str, spec: Value) {
    let mut full = json!({"policyName": policy, "validationActions": ["Deny"]});
    super::mutating::merge(&mut full, spec);
    create(
        e,
        GROUP,
        "v1",
        "validatingadmissionpolicybindings",
        None,
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
               "metadata": {"name": name}, "spec": full}),
    );
}

fn configmap(e: &Engine, name: &str, labels: Value, data: Value) {
    create(
        e,
        "",
        "v1",
        "configmaps",
        Some("default"),
        json!({"metadata": {"name": name, "namespace": "default", "labels": labels}, "data": data}),
    );
}

fn deployment(name: &str, replicas: i64, labels: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": name, "namespace": "default", "labels": labels},
           "spec": {"replicas": replicas}})
}

/// An AdmissionRequest for a deployment in `ns`.
fn request(op: &str, ns: &str, object: Value) -> Value {
    let name = object
        .pointer("/metadata/name")
        .cloned()
        .unwrap_or(Value::Null);
    json!({
        "uid": "0000", "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
        "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
        "requestKind": {"group": "apps", "version": "v1", "kind": "Deployment"},
        "requestResource": {"group": "apps", "version": "v1", "resource": "deployments"},
        "name": name, "namespace": ns, "operation": op,
        "userInfo": {"username": "alice", "groups": ["devs"]},
        "object": object, "oldObject": null, "dryRun": false, "options": null,
    })
}

fn create_request(replicas: i64) -> Value {
    request("CREATE", "default", deployment("web", replicas, json!({})))
}

fn max_replicas(e: &Engine, validation: Value) {
    let mut v = json!({"expression": "object.spec.replicas <= 5"});
    super::mutating::merge(&mut v, validation);
    vap(e, "max-replicas", json!({"validations": [v]}));
    vapb(e, "max-replicas-binding", "max-replicas", json!({}));
}

/// `validating/dispatcher.go`: the denial message and Status; `validator.go`: the
/// reason defaults to Invalid (422) and `message` is used when set.
/// The mutated object alone.
fn mutate(e: &Engine, request: &Value) -> crate::errors::ApiResult<Option<Value>> {
    mutate_with_reinvocation(e, request).map(|o| o.object)
}

#[test]
fn a_failed_validation_denies_with_its_message_and_422() {
    let e = engine();
    max_replicas(&e, json!({"message": "at most 5 replicas"}));
    assert_eq!(
        validate(&e, &create_request(3)).ok(),
        Some(Default::default())
    );
    let err = validate(&e, &create_request(10)).expect_err("denied");
    assert_eq!(err.code, 422);
    assert_eq!(
        err.message,
        "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: at most 5 replicas"
    );
    let status = err.to_status();
    assert_eq!(status["reason"], "Invalid");
    assert_eq!(status["details"]["name"], "web");
    assert_eq!(status["details"]["kind"], "deployments");
}

/// `validator.go`: messageExpression wins over message; without either the message is
/// `failed expression: <expression>`; `reason` picks the code (`reasonToCode`).
#[test]
fn message_expression_and_reason_pick_message_and_code() {
    let e = engine();
    max_replicas(
        &e,
        json!({"message": "static", "reason": "Forbidden",
               "messageExpression": "'replicas ' + string(object.spec.replicas) + ' > 5'"}),
    );
    let err = validate(&e, &create_request(7)).expect_err("denied");
    assert_eq!(err.code, 403);
    assert!(
        err.message.ends_with("denied request: replicas 7 > 5"),
        "{}",
        err.message
    );

    for (reason, code) in [
        ("Unauthorized", 401),
        ("RequestEntityTooLarge", 413),
        ("Invalid", 422),
    ] {
        let e = engine();
        max_replicas(&e, json!({"reason": reason}));
        let err = validate(&e, &create_request(7)).expect_err("denied");
        assert_eq!(err.code, code, "{reason}");
        assert!(
            err.message
                .ends_with("denied request: failed expression: object.spec.replicas <= 5")
        );
    }
}

/// `validating/dispatcher.go`: Warn adds a warning, Audit the `validation_failure`
/// annotation, neither denies; `auditAnnotations` are published as `<policy>/<key>`.
#[test]
fn warn_and_audit_actions_admit_with_a_warning_and_an_annotation() {
    let e = engine();
    vap(
        &e,
        "max-replicas",
        json!({"validations": [{"expression": "object.spec.replicas <= 5", "message": "too many"}],
               "auditAnnotations": [{"key": "replicas", "valueExpression": "string(object.spec.replicas)"}]}),
    );
    vapb(
        &e,
        "b",
        "max-replicas",
        json!({"validationActions": ["Warn", "Audit"]}),
    );
    let out = validate(&e, &create_request(9)).expect("admitted");
    assert_eq!(
        out.warnings,
        [
            "Validation failed for ValidatingAdmissionPolicy 'max-replicas' with binding 'b': too many"
        ]
    );
    assert_eq!(
        out.audit_annotations,
        [
            (
                super::validating::VALIDATION_FAILURE_KEY.to_owned(),
                r#"[{"message":"too many","policy":"max-replicas","binding":"b","expressionIndex":0,"validationActions":["Warn","Audit"]}]"#.to_owned()
            ),
            ("max-replicas/replicas".to_owned(), "9".to_owned()),
        ]
    );
}

fn params_policy(e: &Engine) {
    vap(
        e,
        "limits",
        json!({"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
               "validations": [{"expression": "object.spec.replicas <= int(params.data.max)",
                                "messageExpression": "'max is ' + params.data.max"}]}),
    );
}

/// `generic/policy_dispatcher.go` `CollectParams`: a param by name; none found is an
/// error under `parameterNotFoundAction: Deny` and skips the binding under `Allow`.
#[test]
fn params_by_name_with_parameter_not_found_action() {
    let e = engine();
    params_policy(&e);
    vapb(
        &e,
        "deny-missing",
        "limits",
        json!({"paramRef": {"name": "limits", "parameterNotFoundAction": "Deny"}}),
    );
    let err = validate(&e, &create_request(3)).expect_err("no params");
    assert!(
        err.message.ends_with(
            "ValidatingAdmissionPolicy 'limits' with binding 'deny-missing' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"
        ),
        "{}",
        err.message
    );
    configmap(&e, "limits", json!({}), json!({"max": "4"}));
    assert!(validate(&e, &create_request(3)).is_ok());
    let err = validate(&e, &create_request(5)).expect_err("over the param");
    assert!(
        err.message.ends_with("denied request: max is 4"),
        "{}",
        err.message
    );

    let e = engine();
    params_policy(&e);
    vapb(
        &e,
        "allow-missing",
        "limits",
        json!({"paramRef": {"name": "nothere", "parameterNotFoundAction": "Allow"}}),
    );
    assert!(validate(&e, &create_request(50)).is_ok());
}

/// `CollectParams`: a selector evaluates the policy once per selected param.
#[test]
fn params_by_selector_evaluate_each_param() {
    let e = engine();
    params_policy(&e);
    vapb(
        &e,
        "b",
        "limits",
        json!({"paramRef": {"selector": {"matchLabels": {"policy": "limits"}},
                            "parameterNotFoundAction": "Deny"}}),
    );
    configmap(&e, "a", json!({"policy": "limits"}), json!({"max": "10"}));
    configmap(&e, "b", json!({"policy": "limits"}), json!({"max": "2"}));
    configmap(&e, "c", json!({}), json!({"max": "0"}));
    assert!(validate(&e, &create_request(2)).is_ok());
    let err = validate(&e, &create_request(5)).expect_err("param b denies");
    assert!(err.message.ends_with("max is 2"), "{}", err.message);
}

/// `matching.go` with `predicates/namespace` and `predicates/object`: the policy
/// applies only in selected namespaces and to selected objects.
#[test]
fn namespace_and_object_selectors_narrow_the_policy() {
    let e = engine();
    namespace(&e, "prod", json!({"env": "prod"}));
    vap(
        &e,
        "p",
        json!({"matchConstraints": {
                   "namespaceSelector": {"matchLabels": {"env": "prod"}},
                   "objectSelector": {"matchExpressions": [{"key": "tier", "operator": "Exists"}]}},
               "validations": [{"expression": "false"}]}),
    );
    vapb(&e, "b", "p", json!({}));
    let labelled = deployment("web", 1, json!({"tier": "web"}));
    assert!(validate(&e, &request("CREATE", "default", labelled.clone())).is_ok());
    assert!(validate(&e, &request("CREATE", "prod", labelled)).is_err());
    let unlabelled = deployment("web", 1, json!({}));
    assert!(validate(&e, &request("CREATE", "prod", unlabelled)).is_ok());
    let missing = validate(
        &e,
        &request(
            "CREATE",
            "nowhere",
            deployment("w", 1, json!({"tier": "x"})),
        ),
    );
    assert_eq!(missing.map_err(|e| e.code), Err(404));
}

/// `matching.go` `matchesResourceRules`: excludeResourceRules win, with resourceNames.
#[test]
fn exclude_resource_rules_skip_named_objects() {
    let e = engine();
    vap(
        &e,
        "p",
        json!({"matchConstraints": {"excludeResourceRules": [{
                   "apiGroups": ["apps"], "apiVersions": ["*"], "operations": ["*"],
                   "resources": ["deployments"], "resourceNames": ["special"]}]},
               "validations": [{"expression": "false"}]}),
    );
    vapb(&e, "b", "p", json!({}));
    assert!(
        validate(
            &e,
            &request("CREATE", "default", deployment("special", 1, json!({})))
        )
        .is_ok()
    );
    assert!(
        validate(
            &e,
            &request("CREATE", "default", deployment("other", 1, json!({})))
        )
        .is_err()
    );
}

/// `validating/validator.go` with composited variables: `variables.x` in order.
#[test]
fn variables_are_computed_in_order() {
    let e = engine();
    vap(
        &e,
        "p",
        json!({"variables": [{"name": "replicas", "expression": "object.spec.replicas"},
                             {"name": "big", "expression": "variables.replicas > 5"},
                             {"name": "broken", "expression": "object.nosuch.field"}],
               "validations": [{"expression": "!variables.big",
                                "messageExpression": "'replicas: ' + string(variables.replicas)"}]}),
    );
    vapb(&e, "b", "p", json!({}));
    assert!(
        validate(&e, &create_request(4)).is_ok(),
        "an unused broken variable is harmless"
    );
    let err = validate(&e, &create_request(6)).expect_err("big");
    assert!(err.message.ends_with("replicas: 6"), "{}", err.message);
}

/// `webhook/matchconditions/matcher.go`: a false condition skips the policy; an error
/// is handled per failurePolicy (Fail: the request is denied with the error).
#[test]
fn match_conditions_gate_the_validations() {
    let e = engine();
    vap(
        &e,
        "p",
        json!({"matchConditions": [{"name": "not-alice", "expression": "request.userInfo.username != 'alice'"}],
               "validations": [{"expression": "false"}]}),
    );
    vapb(&e, "b", "p", json!({}));
    assert!(validate(&e, &create_request(1)).is_ok(), "alice is exempt");
    let mut bob = create_request(1);
    bob["userInfo"]["username"] = json!("bob");
    assert!(validate(&e, &bob).is_err());

    let e = engine();
    vap(
        &e,
        "p",
        json!({"matchConditions": [{"name": "broken", "expression": "object.nosuch == 1"}],
               "validations": [{"expression": "true"}]}),
    );
    vapb(&e, "b", "p", json!({}));
    let err = validate(&e, &create_request(1)).expect_err("Fail");
    assert!(
        err.message.ends_with(
            "denied request: expression 'object.nosuch == 1' resulted in error: No such key: nosuch"
        ),
        "{}",
        err.message
    );
}

/// `validator.go` `policyDecisionActionForError`: a runtime error denies under Fail and
/// admits under Ignore.
#[test]
fn failure_policy_decides_runtime_errors() {
    for (policy, denied) in [("Fail", true), ("Ignore", false)] {
        let e = engine();
        vap(
            &e,
            "p",
            json!({"failurePolicy": policy, "validations": [{"expression": "object.spec.nosuch > 1"}]}),
        );
        vapb(&e, "b", "p", json!({}));
        let r = validate(&e, &create_request(1));
        assert_eq!(r.is_err(), denied, "{policy}: {r:?}");
        if let Err(err) = r {
            assert!(err.message.contains("nosuch"), "{}", err.message);
        }
    }
}

/// `generic/policy_matcher.go` `BindingMatches`: a binding's matchResources narrow the
/// policy's constraints (here to UPDATE only).
#[test]
fn a_binding_narrows_the_match() {
    let e = engine();
    vap(&e, "p", json!({"validations": [{"expression": "false"}]}));
    vapb(
        &e,
        "b",
        "p",
        json!({"matchResources": {"resourceRules": [{
                   "apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["UPDATE"],
                   "resources": ["deployments"]}]}}),
    );
    assert!(validate(&e, &create_request(1)).is_ok());
    let mut update = create_request(1);
    update["operation"] = json!("UPDATE");
    update["oldObject"] = deployment("web", 1, json!({}));
    assert!(validate(&e, &update).is_err());
}

/// `validating/dispatcher.go`: a request no policy selects (another resource) passes,
/// without its namespace being looked up.
#[test]
fn other_resources_and_unbound_policies_are_ignored() {
    let e = engine();
    vap(&e, "p", json!({"validations": [{"expression": "false"}]}));
    assert!(validate(&e, &create_request(1)).is_ok(), "no binding");
    vapb(&e, "b", "p", json!({}));
    let mut pods = create_request(1);
    pods["resource"] = json!({"group": "", "version": "v1", "resource": "pods"});
    pods["namespace"] = json!("not-created-yet");
    assert!(validate(&e, &pods).is_ok());
}

fn put(e: &Engine, plural: &str, obj: Value) {
    let key = (String::new(), crate::meta::name(&obj).to_owned());
    let r = e
        .store()
        .write(&GroupResource::new(GROUP, plural), &key, false, |_| {
            Ok(Write::Put(obj))
        });
    assert!(r.is_ok());
}

fn map_policy(e: &Engine, name: &str, mutation: Value, reinvocation: &str) {
    put(
        e,
        "mutatingadmissionpolicies",
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy",
               "metadata": {"name": name, "uid": name},
               "spec": {"failurePolicy": "Fail", "reinvocationPolicy": reinvocation,
                        "matchConstraints": {"resourceRules": [{
                            "apiGroups": ["apps"], "apiVersions": ["v1"],
                            "operations": ["CREATE"], "resources": ["deployments"]}]},
                        "mutations": [mutation]}}),
    );
    put(
        e,
        "mutatingadmissionpolicybindings",
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicyBinding",
               "metadata": {"name": format!("{name}-binding")},
               "spec": {"policyName": name}}),
    );
}

/// `mutating/patch/smd.go`: an ApplyConfiguration adds a label (merged, the other
/// labels kept).
#[test]
fn apply_configuration_adds_a_label() {
    let e = engine();
    map_policy(
        &e,
        "label",
        json!({"patchType": "ApplyConfiguration", "applyConfiguration": {"expression":
            "Object{metadata: Object.metadata{labels: {'team': request.userInfo.username}}}"}}),
        "IfNeeded",
    );
    let req = request(
        "CREATE",
        "default",
        deployment("web", 1, json!({"app": "web"})),
    );
    let out = mutate_with_reinvocation(&e, &req).expect("mutated");
    let obj = out.object.expect("changed");
    assert_eq!(
        obj["metadata"]["labels"],
        json!({"app": "web", "team": "alice"})
    );
    assert_eq!(obj["spec"]["replicas"], 1);
    assert_eq!(out.reinvocable.len(), 1);
    assert_eq!(out.reinvocable[0].policy, "label");
}

/// `mutating/patch/json_patch.go`: JSONPatch adds an annotation; a failed `test`
/// leaves the object unchanged; a bad path is an error under Fail.
#[test]
fn json_patch_adds_an_annotation() {
    let e = engine();
    map_policy(
        &e,
        "annotate",
        json!({"patchType": "JSONPatch", "jsonPatch": {"expression":
            "[JSONPatch{op: 'add', path: '/metadata/annotations', value: {}},
              JSONPatch{op: 'add', path: '/metadata/annotations/' + jsonpatch.escapeKey('example.com/by'), value: 'policy'}]"}}),
        "Never",
    );
    let req = request("CREATE", "default", deployment("web", 1, json!({})));
    let obj = mutate(&e, &req).expect("ok").expect("changed");
    assert_eq!(
        obj["metadata"]["annotations"],
        json!({"example.com/by": "policy"})
    );

    let e = engine();
    map_policy(
        &e,
        "test-fails",
        json!({"patchType": "JSONPatch", "jsonPatch": {"expression":
            "[JSONPatch{op: 'test', path: '/spec/replicas', value: 9},
              JSONPatch{op: 'replace', path: '/spec/replicas', value: 1}]"}}),
        "Never",
    );
    assert_eq!(
        mutate(
            &e,
            &request("CREATE", "default", deployment("w", 3, json!({})))
        )
        .ok(),
        Some(None)
    );

    let e = engine();
    map_policy(
        &e,
        "bad",
        json!({"patchType": "JSONPatch", "jsonPatch": {"expression":
            "[JSONPatch{op: 'remove', path: '/spec/nosuch'}]"}}),
        "Never",
    );
    let err = mutate(
        &e,
        &request("CREATE", "default", deployment("w", 3, json!({}))),
    )
    .expect_err("Fail");
    assert_eq!(err.code, 403);
    assert!(
        err.message
            .starts_with("policy 'bad' with binding 'bad-binding' denied request: JSONPath:"),
        "{}",
        err.message
    );
}

/// kube-apiserver's policy validation compiles every expression.
#[test]
fn expressions_that_do_not_parse_are_reported() {
    let causes = compile_errors(&json!({"spec": {
        "validations": [{"expression": "object.spec.replicas <="}, {"expression": "true"}]}}));
    assert_eq!(causes.len(), 1);
    assert_eq!(causes[0].field, "spec.validations[0].expression");
}

/// A changed policy is compiled again (the cache follows the stored object).
#[test]
fn a_changed_policy_is_recompiled() {
    let e = engine();
    max_replicas(&e, json!({}));
    assert!(validate(&e, &create_request(3)).is_ok());
    let gr = GroupResource::new(GROUP, "validatingadmissionpolicies");
    let key = (String::new(), "max-replicas".to_owned());
    let stored = e.store().get(&gr, &key).expect("stored");
    let mut changed = (*stored).clone();
    changed["spec"]["validations"][0]["expression"] = json!("object.spec.replicas <= 2");
    put(&e, "validatingadmissionpolicies", changed);
    let err = validate(&e, &create_request(3)).expect_err("recompiled");
    assert!(
        err.message
            .ends_with("failed expression: object.spec.replicas <= 2"),
        "{}",
        err.message
    );
}

/// `CollectParams`: a namespaced paramKind without `paramRef.namespace` cannot serve a
/// cluster-scoped request.
#[test]
fn namespaced_params_need_a_namespace() {
    let e = engine();
    vap(
        &e,
        "p",
        json!({"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
               "matchConstraints": {"resourceRules": [{
                   "apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                   "resources": ["namespaces"]}]},
               "validations": [{"expression": "true"}]}),
    );
    vapb(
        &e,
        "b",
        "p",
        json!({"paramRef": {"name": "x", "parameterNotFoundAction": "Allow"}}),
    );
    let req = json!({"operation": "CREATE", "name": "n",
        "resource": {"group": "", "version": "v1", "resource": "namespaces"},
        "kind": {"group": "", "version": "v1", "kind": "Namespace"},
        "userInfo": {"username": "alice"}, "object": {"metadata": {"name": "n"}}, "oldObject": null});
    let err = validate(&e, &req).expect_err("config error");
    assert!(
        err.message.ends_with("failed to configure binding: cannot use namespaced paramRef in policy binding that matches cluster-scoped resources"),
        "{}",
        err.message
    );
    assert!(
        err.message.starts_with("namespaces \"n\" is forbidden: "),
        "{}",
        err.message
    );
}
