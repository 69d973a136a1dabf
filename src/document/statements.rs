//! Statement positions in arbitrary C++ sources, for coverage marker injection (being built).
