//! `storage.k8s.io/v1`: marked aliases of k8s-openapi's storage v1 types, the input of the built-in
//! clientset, listers and informers under [`crate::kubernetes`].
//!
//! +groupName=storage.k8s.io

/// `CSIDriver` (storage.k8s.io/v1, `csidrivers`, cluster-scoped, no status subresource).
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:noStatus
pub type CSIDriver = k8s_openapi::api::storage::v1::CSIDriver;

/// `CSINode` (storage.k8s.io/v1, `csinodes`, cluster-scoped, no status subresource).
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:noStatus
pub type CSINode = k8s_openapi::api::storage::v1::CSINode;

/// `CSIStorageCapacity` (storage.k8s.io/v1, `csistoragecapacities`, namespaced, no status subresource).
///
/// +genclient
/// +genclient:noStatus
pub type CSIStorageCapacity = k8s_openapi::api::storage::v1::CSIStorageCapacity;

/// `StorageClass` (storage.k8s.io/v1, `storageclasses`, cluster-scoped, no status subresource).
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:noStatus
pub type StorageClass = k8s_openapi::api::storage::v1::StorageClass;

/// `VolumeAttachment` (storage.k8s.io/v1, `volumeattachments`, cluster-scoped).
///
/// +genclient
/// +genclient:nonNamespaced
pub type VolumeAttachment = k8s_openapi::api::storage::v1::VolumeAttachment;
