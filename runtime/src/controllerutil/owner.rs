//! Owner references (controller-runtime's `SetControllerReference`, `SetOwnerReference`,
//! apimachinery's `GetControllerOf` and `IsControlledBy`).
//!
//! Two references name the same owner when their API groups, kinds and names match (the
//! version may differ: an owner read as `apps/v1beta1` is the same Deployment as
//! `apps/v1`); setting a reference replaces one to the same owner instead of adding a
//! second.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube_core::Resource;

/// An owner reference could not be set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OwnerError {
    /// The object already has a different controller (controller-runtime's
    /// `AlreadyOwnedError`): two controllers must never fight over one object.
    #[error("object {object:?} is already owned by another {kind} controller {name:?}")]
    AlreadyOwned {
        /// The object's name.
        object: String,
        /// The existing controller's kind.
        kind: String,
        /// The existing controller's name.
        name: String,
    },
    /// The owner has no name or no uid yet (it was never read back from the server).
    #[error("the owner has no {0}: create it (or read it) before referring to it")]
    OwnerIncomplete(&'static str),
    /// A namespaced owner of a cluster-scoped object, or an owner in another namespace;
    /// the garbage collector would treat such a reference as unresolvable.
    #[error(
        "cross-namespace owner references are disallowed: owner in {owner:?}, object in {object:?}"
    )]
    CrossNamespace {
        /// The owner's namespace.
        owner: String,
        /// The object's namespace (empty for a cluster-scoped object).
        object: String,
    },
}

/// The group of an `apiVersion` (`apps/v1` → `apps`, `v1` → the core group, empty).
pub(crate) fn group_of(api_version: &str) -> &str {
    api_version
        .rsplit_once('/')
        .map_or("", |(group, _version)| group)
}

/// Whether `a` and `b` refer to the same object: same group, kind and name.
fn same_owner(a: &OwnerReference, b: &OwnerReference) -> bool {
    group_of(&a.api_version) == group_of(&b.api_version) && a.kind == b.kind && a.name == b.name
}

/// A reference to `owner` (`controller` and `blockOwnerDeletion` set as asked).
pub fn owner_reference<O: Resource<DynamicType = ()>>(
    owner: &O,
    controller: bool,
) -> Result<OwnerReference, OwnerError> {
    let meta = owner.meta();
    let name = meta
        .name
        .clone()
        .ok_or(OwnerError::OwnerIncomplete("name"))?;
    let uid = meta.uid.clone().ok_or(OwnerError::OwnerIncomplete("uid"))?;
    Ok(OwnerReference {
        api_version: O::api_version(&()).into_owned(),
        kind: O::kind(&()).into_owned(),
        name,
        uid,
        controller: controller.then_some(true),
        block_owner_deletion: controller.then_some(true),
    })
}

/// A namespaced owner must be in the object's namespace (controller-runtime's
/// `validateOwner`).
fn validate_namespaces(owner: &impl Resource, object: &impl Resource) -> Result<(), OwnerError> {
    let owner_ns = owner.meta().namespace.as_deref().unwrap_or("");
    let object_ns = object.meta().namespace.as_deref().unwrap_or("");
    if owner_ns.is_empty() || owner_ns == object_ns {
        Ok(())
    } else {
        Err(OwnerError::CrossNamespace {
            owner: owner_ns.to_owned(),
            object: object_ns.to_owned(),
        })
    }
}

fn upsert(object: &mut impl Resource, reference: OwnerReference) {
    let owners = object
        .meta_mut()
        .owner_references
        .get_or_insert_with(Vec::new);
    match owners.iter_mut().find(|r| same_owner(r, &reference)) {
        Some(existing) => *existing = reference,
        None => owners.push(reference),
    }
}

/// Makes `owner` the controller of `object` (`controller: true`, `blockOwnerDeletion:
/// true`), so the garbage collector deletes `object` with its owner and `owns::<O>()`
/// controllers reconcile the owner when `object` changes. Refuses when another object
/// already controls `object`; replaces an existing reference to the same owner.
pub fn set_controller_reference<O: Resource<DynamicType = ()>>(
    owner: &O,
    object: &mut impl Resource,
) -> Result<(), OwnerError> {
    validate_namespaces(owner, object)?;
    let reference = owner_reference(owner, true)?;
    if let Some(existing) = controller_of(object)
        && !same_owner(existing, &reference)
    {
        return Err(OwnerError::AlreadyOwned {
            object: object.meta().name.clone().unwrap_or_default(),
            kind: existing.kind.clone(),
            name: existing.name.clone(),
        });
    }
    upsert(object, reference);
    Ok(())
}

/// Adds `owner` as a non-controlling owner of `object` (replacing a reference to the same
/// owner, and keeping any controller it has).
pub fn set_owner_reference<O: Resource<DynamicType = ()>>(
    owner: &O,
    object: &mut impl Resource,
) -> Result<(), OwnerError> {
    validate_namespaces(owner, object)?;
    let mut reference = owner_reference(owner, false)?;
    if let Some(existing) = object
        .meta()
        .owner_references
        .iter()
        .flatten()
        .find(|r| same_owner(r, &reference))
    {
        // Setting a plain owner reference never demotes a controller.
        reference.controller = existing.controller;
        reference.block_owner_deletion = existing.block_owner_deletion;
    }
    upsert(object, reference);
    Ok(())
}

/// Removes every reference to `owner` from `object`; whether one was there.
pub fn remove_owner_reference<O: Resource<DynamicType = ()>>(
    owner: &O,
    object: &mut impl Resource,
) -> bool {
    let (api_version, kind) = (O::api_version(&()), O::kind(&()));
    let name = owner.meta().name.as_deref().unwrap_or("");
    let Some(owners) = object.meta_mut().owner_references.as_mut() else {
        return false;
    };
    let before = owners.len();
    owners.retain(|r| {
        !(group_of(&r.api_version) == group_of(&api_version) && r.kind == kind && r.name == name)
    });
    before != owners.len()
}

/// Whether `object` has a reference to `owner` (same group, kind and name).
pub fn has_owner_reference<O: Resource<DynamicType = ()>>(
    owner: &O,
    object: &impl Resource,
) -> bool {
    let (api_version, kind) = (O::api_version(&()), O::kind(&()));
    let name = owner.meta().name.as_deref().unwrap_or("");
    object.meta().owner_references.iter().flatten().any(|r| {
        group_of(&r.api_version) == group_of(&api_version) && r.kind == kind && r.name == name
    })
}

/// The reference to `object`'s controller, if it has one (apimachinery's
/// `GetControllerOf`).
pub fn controller_of(object: &impl Resource) -> Option<&OwnerReference> {
    object
        .meta()
        .owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true))
}

/// Whether `owner` is `object`'s controller: the controller reference carries `owner`'s
/// uid (apimachinery's `IsControlledBy`).
pub fn is_controlled_by(object: &impl Resource, owner: &impl Resource) -> bool {
    match (controller_of(object), owner.meta().uid.as_deref()) {
        (Some(reference), Some(uid)) => reference.uid == uid,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::{
        apps::v1::{Deployment, ReplicaSet},
        core::v1::{ConfigMap, Namespace},
    };
    use kube_core::ObjectMeta;

    use super::*;

    fn meta(namespace: Option<&str>, name: &str, uid: &str) -> ObjectMeta {
        ObjectMeta {
            namespace: namespace.map(str::to_owned),
            name: Some(name.to_owned()),
            uid: Some(uid.to_owned()),
            ..ObjectMeta::default()
        }
    }

    fn deployment(name: &str, uid: &str) -> Deployment {
        Deployment {
            metadata: meta(Some("default"), name, uid),
            ..Deployment::default()
        }
    }

    fn replica_set() -> ReplicaSet {
        ReplicaSet {
            metadata: meta(Some("default"), "web-1", "rs-uid"),
            ..ReplicaSet::default()
        }
    }

    /// controller-runtime `controllerutil_test.go`: "should set the OwnerReference if it
    /// can find the group version kind", with controller and blockOwnerDeletion true.
    #[test]
    fn a_controller_reference_names_the_owner_and_blocks_its_deletion() {
        let mut rs = replica_set();
        set_controller_reference(&deployment("web", "d-uid"), &mut rs).expect("set");
        let reference = controller_of(&rs).expect("controller");
        assert_eq!(
            (reference.api_version.as_str(), reference.kind.as_str()),
            ("apps/v1", "Deployment")
        );
        assert_eq!(
            (reference.name.as_str(), reference.uid.as_str()),
            ("web", "d-uid")
        );
        assert_eq!(reference.block_owner_deletion, Some(true));
        assert!(is_controlled_by(&rs, &deployment("web", "d-uid")));
        assert!(!is_controlled_by(&rs, &deployment("web", "other-uid")));
    }

    /// "should return an error if it's setting a controller reference on an object that
    /// already has one": an AlreadyOwnedError, and the object is unchanged.
    #[test]
    fn a_second_controller_is_refused() {
        let mut rs = replica_set();
        set_controller_reference(&deployment("web", "d-uid"), &mut rs).expect("set");
        let before = rs.metadata.owner_references.clone();
        let err = set_controller_reference(&deployment("api", "a-uid"), &mut rs)
            .expect_err("already owned");
        assert!(matches!(err, OwnerError::AlreadyOwned { ref name, .. } if name == "web"));
        assert_eq!(rs.metadata.owner_references, before);
        // The same owner again (a new uid after recreation) replaces the reference.
        set_controller_reference(&deployment("web", "d-uid-2"), &mut rs).expect("same owner");
        let owners = rs.metadata.owner_references.as_ref().expect("owners");
        assert_eq!(owners.len(), 1);
        assert_eq!(owners[0].uid, "d-uid-2");
    }

    /// "should not duplicate owner references" and "should replace the owner reference
    /// when the group and kind match, ignoring the version".
    #[test]
    fn owner_references_are_upserted_by_group_kind_and_name() {
        let mut rs = replica_set();
        let owner = deployment("web", "d-uid");
        set_owner_reference(&owner, &mut rs).expect("set");
        set_owner_reference(&owner, &mut rs).expect("set again");
        rs.metadata.owner_references.as_mut().expect("owners")[0].api_version =
            "apps/v1beta2".into();
        set_owner_reference(&owner, &mut rs).expect("other version");
        let owners = rs.metadata.owner_references.as_ref().expect("owners");
        assert_eq!(owners.len(), 1, "{owners:?}");
        assert_eq!(owners[0].api_version, "apps/v1");
        assert_eq!(owners[0].controller, None, "a plain owner is no controller");
        assert!(controller_of(&rs).is_none());
        set_owner_reference(
            &ConfigMap {
                metadata: meta(Some("default"), "cm", "cm-uid"),
                ..ConfigMap::default()
            },
            &mut rs,
        )
        .expect("second owner");
        assert_eq!(rs.metadata.owner_references.as_ref().map(Vec::len), Some(2));
        assert!(has_owner_reference(&owner, &rs));
        assert!(remove_owner_reference(&owner, &mut rs));
        assert!(!has_owner_reference(&owner, &rs));
        assert!(!remove_owner_reference(&owner, &mut rs));
    }

    #[test]
    fn a_plain_owner_reference_keeps_a_controller_a_controller() {
        let mut rs = replica_set();
        let owner = deployment("web", "d-uid");
        set_controller_reference(&owner, &mut rs).expect("controller");
        set_owner_reference(&owner, &mut rs).expect("plain");
        assert!(is_controlled_by(&rs, &owner));
    }

    /// controller-runtime `validateOwner`: a namespaced owner must share the object's
    /// namespace; a cluster-scoped owner may own anything.
    #[test]
    fn cross_namespace_and_namespaced_owners_of_cluster_objects_are_refused() {
        let mut other_ns = replica_set();
        other_ns.metadata.namespace = Some("prod".into());
        assert!(matches!(
            set_controller_reference(&deployment("web", "d-uid"), &mut other_ns),
            Err(OwnerError::CrossNamespace { .. })
        ));
        let mut cluster_object = Namespace {
            metadata: meta(None, "team-a", "ns-uid"),
            ..Namespace::default()
        };
        assert!(matches!(
            set_owner_reference(&deployment("web", "d-uid"), &mut cluster_object),
            Err(OwnerError::CrossNamespace { .. })
        ));
        let cluster_owner = Namespace {
            metadata: meta(None, "team-a", "ns-uid"),
            ..Namespace::default()
        };
        set_owner_reference(&cluster_owner, &mut replica_set()).expect("cluster owner");
    }

    #[test]
    fn an_owner_never_read_from_the_server_is_refused() {
        let mut unsaved = deployment("web", "x");
        unsaved.metadata.uid = None;
        assert_eq!(
            set_controller_reference(&unsaved, &mut replica_set()),
            Err(OwnerError::OwnerIncomplete("uid"))
        );
    }
}
