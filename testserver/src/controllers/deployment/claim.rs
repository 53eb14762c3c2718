//! Which ReplicaSets a Deployment owns (kubernetes `pkg/controller/controller_ref_manager.go`
//! `ClaimReplicaSets` / `ClaimObject`, as `pkg/controller/deployment/deployment_controller.go`
//! `getReplicaSetsForDeployment` uses it).
//!
//! For each ReplicaSet in the Deployment's namespace:
//!
//! * controlled by another owner: not ours, left alone;
//! * controlled by this Deployment (same uid): ours while its labels match the selector;
//!   if they no longer do, it is released (the ownerReference removed), unless the
//!   Deployment is being deleted;
//! * controlled by no one (an orphan): adopted (an ownerReference patched in) if its labels
//!   match, neither it nor the Deployment is being deleted.
//!
//! A selector is `matchLabels` and `matchExpressions` (`In`, `NotIn`, `Exists`,
//! `DoesNotExist`), all required. An empty selector would select everything and is refused
//! earlier (the sync loop's `SelectingAll` case); an invalid one (an unknown operator, `In`
//! with no values) matches nothing.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::apps::v1::{Deployment, ReplicaSet},
    apimachinery::pkg::apis::meta::v1::LabelSelector,
};

use super::replicasets as rs;
use crate::controllers::compat::Opt;

/// What to do with one ReplicaSet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Claim {
    /// The Deployment owns it.
    Owned,
    /// An orphan to adopt: then the Deployment owns it.
    Adopt,
    /// Owned but no longer selected: remove the ownerReference.
    Release,
    /// Not the Deployment's.
    Ignore,
}

/// Whether `selector` has no requirement at all (it would select everything).
pub(crate) use crate::controllers::pods::selector_is_empty as is_empty;

/// Whether `labels` satisfy every requirement of `selector` (an empty selector matches
/// everything, an invalid one nothing).
pub(crate) fn matches(selector: &LabelSelector, labels: Option<&BTreeMap<String, String>>) -> bool {
    let empty = BTreeMap::new();
    let labels = labels.unwrap_or(&empty);
    let labels_ok = selector
        .match_labels
        .iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    let expressions_ok = selector.match_expressions.iter().flatten().all(|e| {
        let value = labels.get(&e.key);
        let values = e.values.as_deref().unwrap_or_default();
        match e.operator.as_str() {
            "In" => !values.is_empty() && value.is_some_and(|v| values.contains(v)),
            "NotIn" => !values.is_empty() && value.is_none_or(|v| !values.contains(v)),
            "Exists" => values.is_empty() && value.is_some(),
            "DoesNotExist" => values.is_empty() && value.is_none(),
            _ => false,
        }
    });
    labels_ok && expressions_ok
}

/// `ClaimObject` for one ReplicaSet; see the module docs.
pub(crate) fn claim(d: &Deployment, r: &ReplicaSet) -> Claim {
    if r.metadata.namespace != d.metadata.namespace {
        return Claim::Ignore;
    }
    let selector = d.spec.opt().map(|s| s.selector.clone()).unwrap_or_default();
    let selected = !is_empty(&selector) && matches(&selector, r.metadata.labels.as_ref());
    let deleting = d.metadata.deletion_timestamp.is_some();
    match rs::controller_of(&r.metadata) {
        Some(owner) => {
            if d.metadata.uid.as_deref() != Some(owner.uid.as_str()) {
                Claim::Ignore
            } else if selected {
                Claim::Owned
            } else if deleting {
                Claim::Ignore
            } else {
                Claim::Release
            }
        }
        None if selected && !deleting && r.metadata.deletion_timestamp.is_none() => Claim::Adopt,
        None => Claim::Ignore,
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::{
        api::apps::v1::DeploymentSpec,
        apimachinery::pkg::apis::meta::v1::{LabelSelectorRequirement, ObjectMeta, Time},
    };

    use super::*;
    use crate::controllers::compat;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn deployment() -> Deployment {
        Deployment {
            metadata: ObjectMeta {
                name: Some("web".to_owned()),
                namespace: Some("ns".to_owned()),
                uid: Some("d-uid".to_owned()),
                ..ObjectMeta::default()
            },
            spec: compat::field(DeploymentSpec {
                selector: LabelSelector {
                    match_labels: Some(labels(&[("app", "web")])),
                    match_expressions: None,
                },
                ..DeploymentSpec::default()
            }),
            status: None,
        }
    }

    fn replica_set(labels_: &[(&str, &str)], owner: Option<&str>) -> ReplicaSet {
        let d = deployment();
        ReplicaSet {
            metadata: ObjectMeta {
                name: Some("rs".to_owned()),
                namespace: Some("ns".to_owned()),
                labels: Some(labels(labels_)),
                owner_references: owner.map(|uid| {
                    let mut reference = rs::controller_ref(&d);
                    reference.uid = uid.to_owned();
                    vec![reference]
                }),
                ..ObjectMeta::default()
            },
            ..ReplicaSet::default()
        }
    }

    #[test]
    fn expressions_follow_the_operators() {
        let req = |op: &str, values: Option<Vec<&str>>| LabelSelector {
            match_labels: None,
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "tier".to_owned(),
                operator: op.to_owned(),
                values: values.map(|v| v.into_iter().map(str::to_owned).collect()),
            }]),
        };
        let front = labels(&[("tier", "front")]);
        let none = labels(&[]);
        assert!(matches(&req("In", Some(vec!["front", "x"])), Some(&front)));
        assert!(!matches(&req("In", Some(vec!["back"])), Some(&front)));
        assert!(matches(&req("NotIn", Some(vec!["back"])), Some(&front)));
        assert!(matches(&req("NotIn", Some(vec!["back"])), Some(&none)));
        assert!(matches(&req("Exists", None), Some(&front)));
        assert!(matches(&req("DoesNotExist", None), None));
        assert!(!matches(&req("Bogus", None), Some(&front)));
        assert!(!matches(&req("In", Some(vec![])), Some(&front)));
        assert!(is_empty(&LabelSelector::default()));
    }

    #[test]
    fn owned_orphaned_foreign_and_unselected_replica_sets() {
        let d = deployment();
        assert_eq!(
            claim(&d, &replica_set(&[("app", "web")], Some("d-uid"))),
            Claim::Owned
        );
        assert_eq!(
            claim(&d, &replica_set(&[("app", "web")], None)),
            Claim::Adopt
        );
        assert_eq!(
            claim(&d, &replica_set(&[("app", "web")], Some("other"))),
            Claim::Ignore
        );
        assert_eq!(
            claim(&d, &replica_set(&[("app", "db")], Some("d-uid"))),
            Claim::Release
        );
        assert_eq!(
            claim(&d, &replica_set(&[("app", "db")], None)),
            Claim::Ignore
        );
        let mut elsewhere = replica_set(&[("app", "web")], None);
        elsewhere.metadata.namespace = Some("other".to_owned());
        assert_eq!(claim(&d, &elsewhere), Claim::Ignore);
    }

    #[test]
    fn a_deleting_deployment_adopts_and_releases_nothing() {
        let mut d = deployment();
        d.metadata.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
        assert_eq!(
            claim(&d, &replica_set(&[("app", "web")], None)),
            Claim::Ignore
        );
        assert_eq!(
            claim(&d, &replica_set(&[("app", "db")], Some("d-uid"))),
            Claim::Ignore
        );
        assert_eq!(
            claim(&d, &replica_set(&[("app", "web")], Some("d-uid"))),
            Claim::Owned
        );
    }

    #[test]
    fn an_empty_selector_claims_nothing() {
        let mut d = deployment();
        {
            let spec = d.spec.opt_mut();
            spec.selector = LabelSelector::default();
        }
        assert_eq!(
            claim(&d, &replica_set(&[("app", "web")], None)),
            Claim::Ignore
        );
    }
}
