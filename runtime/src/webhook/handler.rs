//! [`Handler`], the raw admission handler, and [`Admission`], what a [`Server`] routes a
//! path to: a validator, a defaulter or a raw handler behind one type.
//!
//! [`Server`]: super::Server

use std::{any::type_name, panic::AssertUnwindSafe, sync::Arc};

use futures::{FutureExt, future::BoxFuture};
use kube_core::{
    DynamicObject,
    admission::{AdmissionRequest, AdmissionResponse},
};
use serde::{Serialize, de::DeserializeOwned};

use super::{
    admit::Admit,
    defaulter::{Defaulter, DefaulterOptions, DefaultingHandler},
    review::{self, Decoded, ReviewError},
    validator::{ValidatingHandler, Validator},
};

tokio::task_local! {
    static REQUEST: Arc<AdmissionRequest<DynamicObject>>;
}

/// The admission request being handled, from inside a [`Validator`], [`Defaulter`] or
/// [`Handler`] (controller-runtime's `admission.RequestFromContext`): who asks, the
/// operation, dry-run, the resource and subresource. Its `object` and `old_object` are
/// `None` (the handler has them already). `None` outside a webhook call.
pub fn request() -> Option<Arc<AdmissionRequest<DynamicObject>>> {
    REQUEST.try_with(Arc::clone).ok()
}

/// A raw admission handler (controller-runtime's `admission.Handler`): the request, its
/// objects decoded as [`DynamicObject`]s, in; the answer out. Build the answer with
/// `AdmissionResponse::from(&request)` (allowed), then `.deny(..)` or `.with_patch(..)`.
pub trait Handler: Send + Sync + 'static {
    /// Answers one request.
    fn handle(
        &self,
        request: AdmissionRequest<DynamicObject>,
    ) -> impl Future<Output = AdmissionResponse> + Send;
}

struct RawHandler<H>(H);

impl<H: Handler> Admit for RawHandler<H> {
    fn admit(&self, decoded: Decoded) -> BoxFuture<'_, AdmissionResponse> {
        Box::pin(async move {
            let Decoded {
                mut request,
                object,
                old_object,
            } = decoded;
            let decode = |field: &'static str, value: Option<serde_json::Value>| {
                value
                    .map(serde_json::from_value::<DynamicObject>)
                    .transpose()
                    .map_err(|e| ReviewError::Object {
                        field,
                        message: e.to_string(),
                    })
            };
            match (decode("object", object), decode("oldObject", old_object)) {
                (Ok(object), Ok(old_object)) => {
                    request.object = object;
                    request.old_object = old_object;
                    self.0.handle(request).await
                }
                (Err(error), _) | (_, Err(error)) => {
                    review::errored(&request, 400, error.to_string())
                }
            }
        })
    }
}

/// An admission webhook: what [`ServerBuilder::admission`](super::ServerBuilder::admission)
/// serves on a path (controller-runtime's `admission.Webhook`). Cheap to clone.
#[derive(Clone)]
pub struct Admission {
    inner: Arc<dyn Admit>,
    description: String,
}

impl std::fmt::Debug for Admission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admission")
            .field("handler", &self.description)
            .finish()
    }
}

impl Admission {
    /// A validating webhook for `K` (controller-runtime's `WithValidator`): CREATE calls
    /// [`Validator::validate_create`], UPDATE [`Validator::validate_update`] with the old
    /// object, DELETE [`Validator::validate_delete`] with the object being deleted;
    /// CONNECT is allowed. An object that does not decode as `K` is answered with a 400.
    pub fn validating<K, V>(validator: V) -> Self
    where
        K: DeserializeOwned + Send + Sync + 'static,
        V: Validator<K>,
    {
        Self {
            inner: Arc::new(ValidatingHandler::new(validator)),
            description: format!("validator {} of {}", type_name::<V>(), type_name::<K>()),
        }
    }

    /// A mutating webhook for `K` (controller-runtime's `WithDefaulter`): the object is
    /// decoded, given to [`Defaulter::default`], and the changes answered as a JSONPatch;
    /// DELETE is allowed unchanged.
    pub fn defaulting<K, D>(defaulter: D) -> Self
    where
        K: Serialize + DeserializeOwned + Send + Sync + 'static,
        D: Defaulter<K>,
    {
        Self::defaulting_with_options(defaulter, DefaulterOptions::default())
    }

    /// [`defaulting`](Self::defaulting) with options.
    pub fn defaulting_with_options<K, D>(defaulter: D, options: DefaulterOptions) -> Self
    where
        K: Serialize + DeserializeOwned + Send + Sync + 'static,
        D: Defaulter<K>,
    {
        Self {
            inner: Arc::new(DefaultingHandler::new(defaulter, options)),
            description: format!("defaulter {} of {}", type_name::<D>(), type_name::<K>()),
        }
    }

    /// A webhook over a raw [`Handler`].
    pub fn handler(handler: impl Handler) -> Self {
        Self {
            inner: Arc::new(RawHandler(handler)),
            description: "raw handler".into(),
        }
    }

    /// Answers one decoded request: the handler runs with [`request`] set; a panic is
    /// caught, logged and answered with a 500.
    pub(crate) async fn admit(&self, decoded: Decoded, webhook: &str) -> AdmissionResponse {
        let mut bare = decoded.request.clone();
        bare.object = None;
        bare.old_object = None;
        let bare = Arc::new(bare);
        let call = REQUEST.scope(bare.clone(), self.inner.admit(decoded));
        match AssertUnwindSafe(call).catch_unwind().await {
            Ok(response) => response,
            Err(panic) => {
                let message = panic_message(panic.as_ref());
                tracing::error!(
                    webhook,
                    uid = %bare.uid,
                    handler = %self.description,
                    panic = %message,
                    "admission handler panicked"
                );
                review::errored(&bare, 500, format!("panic: {message} [recovered]"))
            }
        }
    }
}

/// The text a panic was raised with.
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_owned()
    }
}
