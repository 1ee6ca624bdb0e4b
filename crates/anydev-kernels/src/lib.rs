//! Host kernels for the anydev op set.
