// FunctionRef<R(A...)>: a non-owning reference to a callable (C++26's
// std::function_ref, in small). Unlike std::function it never allocates, so
// a layer can pass its branches as lambdas on every step ("nothing allocated
// in a hot loop"). The callable must outlive the reference: pass temporaries
// only as arguments.
#pragma once
#include <memory>
#include <type_traits>
#include <utility>

namespace attn {

template <class Signature>
class FunctionRef;

template <class R, class... Args>
class FunctionRef<R(Args...)> {
 public:
  // clang-format 14 misreads a requires clause before a constructor (it moves
  // noexcept onto a line of its own); this declaration is laid out by hand.
  // clang-format off
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> && std::is_invocable_r_v<R, F&, Args...>)
  FunctionRef(F&& f) noexcept  // NOLINT: implicit, as std::function
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* object, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(object))(std::forward<Args>(args)...);
        }) {}
  // clang-format on

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

}  // namespace attn
