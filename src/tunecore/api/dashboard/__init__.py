"""`tunecore dashboard`: a live, read-only web page over an experiment's
event log, explaining every decision its policies made.

`follow` keeps a view of the log up to date as it grows (`view`, stepping
each new event through the core; `reasons` says why each trial moved),
`payloads` turns the view into the JSON the page asks for, and `server`
serves it with the page (`page.html`, `dashboard.js`, `dashboard.css`,
shipped with the package: the page needs no network). No Ray, and no
import of the user's code: the policies are rebuilt from the log.
"""

from tunecore.api.dashboard.follow import Follower
from tunecore.api.dashboard.server import Dashboard

__all__ = ["Dashboard", "Follower"]
