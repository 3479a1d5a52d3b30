package io.flowscope.collector;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.belongToAnyOf;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import org.junit.jupiter.api.Test;

/**
 * The collector's package map (README "Packages") as rules over its compiled classes (not the tests): the packages
 * depend on each other in one direction only, and only {@link Main} knows the fleet.
 */
class PackageStructureTest {
    private static final String ROOT = "io.flowscope.collector";

    private static final JavaClasses MAIN_CLASSES = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
            .importPackages(ROOT);

    /** Each package of the collector is a slice; the top package (Main and the composition root) is one too. */
    private static final SliceAssignment BY_PACKAGE = new SliceAssignment() {
        @Override
        public SliceIdentifier getIdentifierOf(final JavaClass c) {
            final String p = c.getPackageName();
            if (p.equals(ROOT)) {
                return SliceIdentifier.of("collector (top)");
            }
            if (!p.startsWith(ROOT + ".")) {
                return SliceIdentifier.ignore();
            }
            final String rest = p.substring(ROOT.length() + 1);
            final int dot = rest.indexOf('.');
            return SliceIdentifier.of(dot < 0 ? rest : rest.substring(0, dot));
        }

        @Override
        public String getDescription() {
            return "the packages of " + ROOT;
        }
    };

    @Test
    void shouldHaveNoImportCyclesBetweenPackages() {
        slices().assignedFrom(BY_PACKAGE).should().beFreeOfCycles().check(MAIN_CLASSES);
    }

    @Test
    void shouldLetOnlyMainKnowTheFleet() {
        noClasses()
                .that(not(resideInAPackage(ROOT + ".fleet..")).and(not(belongToAnyOf(Main.class))))
                .should()
                .dependOnClassesThat()
                .resideInAPackage(ROOT + ".fleet..")
                .check(MAIN_CLASSES);
    }
}
