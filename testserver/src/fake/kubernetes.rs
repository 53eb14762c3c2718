//! The fake of kubegen's built-in clientset ([`kubegen::kubernetes`]): client-go's
//! `kubernetes/fake` package.
//!
//! `kubegen-codegen --with-fake` generates this module for custom API trees, but not for
//! the runtime's built-in tree: a fake stands on this crate's in-process server, and the
//! runtime crate cannot depend on the test server (the test server depends on the
//! runtime). So it lives here, written like the generated one: a [`Clientset`] over a
//! [`Fake`] that dereferences to the real
//! `kubegen::kubernetes::clientset::versioned::Clientset`, whose groups are kubegen's cargo
//! features (`core` for the example below): the ones its user turns on.
//!
//! ```
//! # #![allow(clippy::unwrap_used)]
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kubegen_testserver::fake::kubernetes::new_simple_clientset;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let cs = new_simple_clientset();
//! let mut cm = ConfigMap::default();
//! cm.metadata.name = Some("settings".into());
//! cm.metadata.namespace = Some("default".into());
//! cs.add(&cm).unwrap();
//! assert!(cs.core_v1().config_maps("default").get("settings").await.is_ok());
//! assert!(cs.fake().actions().iter().any(|a| a.matches("get", "configmaps")));
//! # }
//! ```

use std::ops::Deref;

use kubegen::kubernetes::clientset::versioned;

use super::{Fake, FakeError};

/// The built-in clientset over an in-process server; dereferences to the real
/// [`versioned::Clientset`].
#[derive(Clone, Debug)]
pub struct Clientset {
    clientset: versioned::Clientset,
    fake: Fake,
}

impl Clientset {
    /// An empty fake server that serves every built-in resource of the clientset.
    pub fn new() -> Self {
        // The server already serves every resource of the clientset: both come from
        // `kubegen::kubernetes::catalog` (see `crate::builtins`).
        let fake = Fake::new();
        Self {
            clientset: versioned::Clientset::new(fake.client()),
            fake,
        }
    }

    /// Seeds `obj` without recording an action (client-go's tracker `Add`).
    pub fn add<K: kubegen::Object>(&self, obj: &K) -> Result<(), FakeError> {
        self.fake.add(obj)
    }

    /// The fake server: its action log and reactors.
    pub fn fake(&self) -> &Fake {
        &self.fake
    }
}

impl Default for Clientset {
    fn default() -> Self {
        Self::new()
    }
}

impl Deref for Clientset {
    type Target = versioned::Clientset;

    fn deref(&self) -> &versioned::Clientset {
        &self.clientset
    }
}

/// An empty fake built-in clientset (client-go's `fake.NewSimpleClientset`).
pub fn new_simple_clientset() -> Clientset {
    Clientset::new()
}
