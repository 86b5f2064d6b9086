"""What a tuning card records beside the settings: the card, its driver, the engine build and, when the loaded
model runs exactly the settings on the sliders, the speeds of its last reply."""

from __future__ import annotations

from collections.abc import Callable

from gui.core.cards import Card
from gui.core.tuning_card import CardFacts
from gui.core.words import english
from gui.ui.controllers.machine import MachineController
from gui.ui.controllers.planning import Planning
from gui.ui.load_session import LoadSession


class CardFactsSource:
    def __init__(
        self,
        *,
        session: LoadSession,
        planning_: Planning,
        machine: MachineController,
        speeds: Callable[[], tuple[float, float] | None],
        simulated: tuple[Card, ...] = (),
    ) -> None:
        self.session = session
        self.planning = planning_
        self.machine = machine
        self.speeds = speeds
        self.simulated = simulated

    def __call__(self) -> CardFacts:
        state, context = self.session.state, self.planning.context()
        build = state.build
        same = state.ready and context.model is not None and state.model == context.model
        same = same and state.settings == context.settings
        speeds = self.speeds()
        gen, prompt = speeds if same and speeds is not None else (None, None)
        gpus = self.machine.gpus
        card = gpus[0].name if gpus else None
        if card is None and self.simulated:
            card = f"{self.simulated[0].name} (SIMULATED)"
        return CardFacts(
            card_name=card,
            driver=self.machine.driver_version,
            engine_build=english(build.describe()) if build is not None else None,
            gen_tok_s=gen,
            prompt_tok_s=prompt,
        )
