//! [`SchemaRef`]: the schema a registry entry enforces, shared by every clone of the entry.
//! A CRD version's schema is compiled when the CRD is written; a built-in kind's is
//! compiled on first use (most servers never write most kinds), once per process.

use std::sync::{Arc, OnceLock};

use super::CrdSchema;

enum Cell {
    Compiled(Box<CrdSchema>),
    Lazy {
        cell: OnceLock<Option<&'static CrdSchema>>,
        build: fn() -> Option<&'static CrdSchema>,
    },
}

/// A shared, possibly lazily compiled schema; compared by identity.
#[derive(Clone)]
pub struct SchemaRef(Arc<Cell>);

impl SchemaRef {
    /// A schema compiled already (a CRD version's).
    pub fn compiled(schema: CrdSchema) -> Self {
        SchemaRef(Arc::new(Cell::Compiled(Box::new(schema))))
    }

    /// A schema `build` returns on first [`SchemaRef::get`] (a built-in kind's, which
    /// [`super::builtin::schema`] compiles once per process).
    pub fn lazy(build: fn() -> Option<&'static CrdSchema>) -> Self {
        SchemaRef(Arc::new(Cell::Lazy {
            cell: OnceLock::new(),
            build,
        }))
    }

    /// The schema, compiling it now if it is lazy; `None` if it could not be built.
    pub fn get(&self) -> Option<&CrdSchema> {
        match &*self.0 {
            Cell::Compiled(s) => Some(s),
            Cell::Lazy { cell, build } => *cell.get_or_init(build),
        }
    }
}

impl std::fmt::Debug for SchemaRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &*self.0 {
            Cell::Compiled(_) => f.write_str("SchemaRef(compiled)"),
            Cell::Lazy { cell, .. } => {
                write!(f, "SchemaRef(lazy, built: {})", cell.get().is_some())
            }
        }
    }
}

impl PartialEq for SchemaRef {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for SchemaRef {}
