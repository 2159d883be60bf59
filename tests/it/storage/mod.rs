//! Storage: roots other than a local directory (`roots`), what the
//! catalog leaves on storage (`ownership`), and maintenance tasks.

mod maintenance;
mod ownership;
mod roots;
