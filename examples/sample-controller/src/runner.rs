//! Wiring (kubernetes/sample-controller's `main.go`): clientsets, one shared informer
//! factory viewed through two typed factories (kubegen's built-in one for Deployments and
//! the generated one for Foos), an event broadcaster writing to the
//! API server, the controller, and its task.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::EventSource;
use kubegen::cache::InformerError;
use kubegen::client::Client;
use kubegen::record::{ClientEventSink, EventBroadcaster};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use kubegen::kubernetes::clientset::versioned::Clientset as KubeClientset;
use kubegen::kubernetes::informers::externalversions::SharedInformerFactory as KubeInformerFactory;

use crate::client::clientset::versioned::Clientset;
use crate::client::informers::externalversions::SharedInformerFactory;
use crate::controller::{CONTROLLER_AGENT_NAME, Controller, ControllerError};

/// A running controller and what it needs to stop cleanly.
#[derive(Debug)]
pub struct Running {
    /// The controller.
    pub controller: Arc<Controller>,
    factory: kubegen::informers::SharedInformerFactory,
    broadcaster: EventBroadcaster,
    stop: CancellationToken,
    task: JoinHandle<Result<(), ControllerError>>,
}

/// Starts the controller over `client` with `workers` workers (resync every 30 s, as
/// sample-controller's informer factories do).
pub fn start(client: Client, workers: usize) -> Result<Running, InformerError> {
    // One generic factory behind both typed views (client-go has two factories; here they
    // share informers and are started and stopped together).
    // Cached Foos and Deployments never hold managedFields (decoded without them): the
    // controller does not read them, and updates of cached objects keep the server's.
    let factory = kubegen::informers::SharedInformerFactory::builder(client.clone())
        .default_resync(Duration::from_secs(30))
        .strip(kubegen::client::Strip::MANAGED_FIELDS)
        .build();
    let kube_factory = KubeInformerFactory::from_generic(factory.clone());
    let sample_factory = SharedInformerFactory::from_generic(factory.clone());
    let broadcaster = EventBroadcaster::new();
    broadcaster.start_structured_logging(tracing::Level::INFO);
    broadcaster.start_recording_to_sink(ClientEventSink::new(client.clone()));
    let recorder = broadcaster.new_recorder(EventSource {
        component: Some(CONTROLLER_AGENT_NAME.to_owned()),
        host: None,
    });
    let controller = Controller::new(
        KubeClientset::new(client.clone()),
        Clientset::new(client),
        &kube_factory,
        &sample_factory,
        recorder,
    )?;
    // Informers requested by the controller start now (non-blocking, as in Go).
    factory.start();
    let stop = CancellationToken::new();
    let task = tokio::spawn({
        let (controller, stop) = (Arc::clone(&controller), stop.clone());
        async move { controller.run(workers, stop).await }
    });
    Ok(Running {
        controller,
        factory,
        broadcaster,
        stop,
        task,
    })
}

impl Running {
    /// Stops the workers (draining the queue), the informers and the event broadcaster.
    pub async fn shutdown(self) -> Result<(), ControllerError> {
        self.stop.cancel();
        let result = match self.task.await {
            Ok(result) => result,
            Err(e) => {
                tracing::error!(error = %e, "controller task failed");
                Ok(())
            }
        };
        self.factory.shutdown().await;
        self.broadcaster.shutdown().await;
        result
    }
}
