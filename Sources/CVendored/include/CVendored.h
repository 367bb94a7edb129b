// The vendored libraries, for platforms other than Apple's when the VendoredLibraries trait asks for them. This target
// exists for Package.swift only: a dependency can't be declared twice with two conditions (Apple's platforms, or the
// trait elsewhere), so CLMDB and CSodium depend on the vendored targets directly on Apple and through this one
// elsewhere.
