//! Storage: roots other than a local directory (`roots`), what the
//! catalog leaves on storage (`ownership`), and maintenance tasks.

mod maintenance;
mod orphans;
mod ownership;
mod roots;
