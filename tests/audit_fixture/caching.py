"""A view's answer cached in redis: the wrapper runs at every request."""

import functools
import json

from flask import request

from .extensions import cache


def cached(seconds):
    def decorator(view):
        @functools.wraps(view)
        def wrapper(*args, **kwargs):
            hit = cache.get(request.path)
            if hit is not None:
                return json.loads(hit)
            answer = view(*args, **kwargs)
            cache.setex(request.path, seconds, json.dumps(answer))
            return answer

        return wrapper

    return decorator
